#pragma once
// smooth_max(a, b) = log(exp(a) + exp(b)), element by element: a differentiable op written outside agf,
// forward and hand-written backward, for agf's autograd (docs/library.md walks through it).
//
//   y = max(a, b) + log1p(exp(-|a - b|))        (the same value, without overflow for large a or b)
//   dy/da = exp(a) / (exp(a) + exp(b)) = σ(a - b)
//   dy/db = exp(b) / (exp(a) + exp(b)) = σ(b - a) = 1 - σ(a - b)
#include <utility>

#include "autograd/variable.h"

namespace custom_op {

// The kernels, on tensors: a, b (and the output gradient) of one shape, f32 or f64, on the CPU.
agf::Tensor smooth_max_forward(const agf::Tensor& a, const agf::Tensor& b);
// dL/dy [shape] -> {dL/da, dL/db}
std::pair<agf::Tensor, agf::Tensor> smooth_max_backward(const agf::Tensor& grad_output, const agf::Tensor& a,
                                                        const agf::Tensor& b);

// The op on variables: the forward, and a node whose closure runs the backward.
agf::Variable smooth_max(const agf::Variable& a, const agf::Variable& b);

}  // namespace custom_op
