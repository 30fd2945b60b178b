#pragma once
// Softmax and log-softmax on CUDA tensors (the public ops in ops/softmax.h route here). Any floating
// dtype; f16/bf16 compute in f32.
#include "core/tensor.h"

namespace agf::ops::cuda {

Tensor softmax_forward(const Tensor& x);
Tensor softmax_backward(const Tensor& grad, const Tensor& y);
Tensor log_softmax_forward(const Tensor& x);
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y);

}  // namespace agf::ops::cuda
