#pragma once
// The precision of f32 matrix products on the CPU (ops::matmul on f32 CPU tensors, and so Linear and the
// output projection):
//
//   f32   C = A·B in f32: ops/cpu/gemm.h (oneDNN, OpenBLAS or Eigen)
//   bf16  C = bf16(A)·bf16(B), summed in f32: ops/cpu/gemm_bf16.h
//
// Tensors are f32 either way: only the operands a product reads are rounded, inside the GEMM. f64 products
// (gradchecks) and GPU products are never affected. This is what `--precision bf16` means on the CPU
// (docs/mixed-precision.md); the trainer and `agf bench train` set it for their run.
//
// A setting of the calling thread, set for a scope by ScopedMatmulPrecision: ops read it on the thread that
// calls them (their OpenMP workers never do), so one training run cannot change the products of another
// thread's.
namespace agf::ops::cpu {

enum class MatmulPrecision { f32, bf16 };

// This thread's setting: f32 unless a ScopedMatmulPrecision says otherwise.
MatmulPrecision matmul_precision();

// Sets this thread's matmul precision until destroyed, then restores the one before.
class ScopedMatmulPrecision {
 public:
  explicit ScopedMatmulPrecision(MatmulPrecision precision);
  ~ScopedMatmulPrecision();
  ScopedMatmulPrecision(const ScopedMatmulPrecision&) = delete;
  ScopedMatmulPrecision& operator=(const ScopedMatmulPrecision&) = delete;

 private:
  MatmulPrecision previous_;
};

}  // namespace agf::ops::cpu
