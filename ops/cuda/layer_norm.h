#pragma once
// Layer normalization on CUDA tensors (the public ops in ops/layer_norm.h route here). Any floating
// dtype; f16/bf16 compute in f32. mean and rstd are saved in x's dtype, as on the CPU.
#include "ops/layer_norm.h"

namespace agf::ops::cuda {

LayerNormResult layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);
LayerNormGradients layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                       const Tensor& rstd);

}  // namespace agf::ops::cuda
