#pragma once
// Layer normalization over the last axis (length D), with an affine weight and bias of shape [D].
#include "core/tensor.h"

namespace agf::ops {

struct LayerNormResult {
  Tensor y;     // [..., D]
  Tensor mean;  // [rows]    saved for backward, in the compute type (f32 for f16/bf16 on a GPU)
  Tensor rstd;  // [rows]    1/sqrt(var + eps), biased variance, likewise
};

// x̂ = (x - μ)·rstd,  y = x̂·w + b
LayerNormResult layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);

struct LayerNormGradients {
  Tensor x, weight, bias;
};

// With ĝ = g·w:  dL/dx = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)),  dL/dw = Σ_rows g·x̂,  dL/db = Σ_rows g
LayerNormGradients layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                       const Tensor& rstd);

}  // namespace agf::ops
