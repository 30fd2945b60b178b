#pragma once
// Softmax and log-softmax over the last axis.
#include "core/tensor.h"

namespace agf::ops {

// y_i = exp(x_i - max x) / Σ_j exp(x_j - max x)
Tensor softmax_forward(const Tensor& x);
// dL/dx_i = y_i · (g_i - Σ_j g_j y_j)
Tensor softmax_backward(const Tensor& grad, const Tensor& y);

// y_i = x_i - max x - log Σ_j exp(x_j - max x)
Tensor log_softmax_forward(const Tensor& x);
// dL/dx_i = g_i - exp(y_i) · Σ_j g_j
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y);

}  // namespace agf::ops
