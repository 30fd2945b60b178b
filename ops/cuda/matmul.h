#pragma once
// Matrix products on a GPU with cuBLAS. ops/cpu/matmul.cpp prepares the operands for both devices
// (matmul_operands in ops/matmul_plan.h: checks, 1-D promotion, batch broadcasting, a contiguous copy of
// an operand whose last two axes are neither row- nor column-major) and hands CUDA operands here.
#include "core/tensor.h"

namespace agf::ops::cuda {

// out[..., M, N] = a[..., M, K] @ b[..., K, N] for every batch index: a and b as matmul_operands made
// them, out a fresh contiguous CUDA tensor. One cublasGemmStridedBatchedEx call laid out by plan_gemm
// (ops/matmul_plan.cpp explains the row-major ↔ column-major swap). f64 computes in f64; f32 in full
// f32 (no TF32); f16 and bf16 on tensor cores with f32 accumulation.
void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace agf::ops::cuda
