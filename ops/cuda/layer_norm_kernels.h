#pragma once
// Launchers of the layer-norm kernels (ops/cuda/layer_norm_kernels.cu). x, grad and y are contiguous
// [rows, features]; weight, bias and their gradients [features], all of one floating dtype on `device`;
// mean and rstd [rows] in the compute type (layer_norm_workspace_dtype: f64 for f64, else f32), as
// PyTorch keeps them — the backward rebuilds x̂ = (x - μ)·rstd from them, which bf16 values would blur.
#include <cstdint>

#include "core/element_type.h"

namespace agf::cuda {

// y = (x - μ)·rstd·w + b per row, with μ and rstd = 1/sqrt(biased var + eps) saved in `mean`, `rstd`.
void layer_norm_rows(DType dtype, const void* x, const void* weight, const void* bias, void* y, void* mean, void* rstd,
                     int64_t rows, int64_t features, double eps, int device);

// The weight/bias gradients are summed over rows in two deterministic passes: each of
// layer_norm_partial_chunks(rows) chunks of consecutive rows writes one partial sum per feature into a
// workspace, then one pass adds the chunks in order. The workspace holds 2·chunks·features elements of
// the compute type (f64 for f64, else f32): `workspace_dtype`.
int64_t layer_norm_partial_chunks(int64_t rows);
DType layer_norm_workspace_dtype(DType dtype);

// grad_x = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)) with ĝ = g·w, x̂ = (x - μ)·rstd;
// grad_weight = Σ_rows g·x̂, grad_bias = Σ_rows g.
void layer_norm_backward_rows(DType dtype, const void* grad, const void* x, const void* weight, const void* mean,
                              const void* rstd, void* grad_x, void* grad_weight, void* grad_bias, void* workspace,
                              int64_t rows, int64_t features, int device);

}  // namespace agf::cuda
