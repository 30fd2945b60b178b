#pragma once
// Reductions over a set of axes (empty set = all axes), and sum_to: the adjoint of broadcasting.
#include <vector>

#include "core/tensor.h"

namespace agf::ops {

using Axes = std::vector<int64_t>;

Tensor sum(const Tensor& x, const Axes& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keepdim = false);
Tensor max(const Tensor& x, const Axes& axes = {}, bool keepdim = false);

// Backward of sum: every input element receives the gradient of its output (a broadcast).
Tensor sum_backward(const Tensor& grad, const Shape& x_shape, const Axes& axes, bool keepdim);
// Backward of mean: as sum, divided by the number of reduced elements.
Tensor mean_backward(const Tensor& grad, const Shape& x_shape, const Axes& axes, bool keepdim);
// Backward of max: the gradient goes to the maximal elements, shared equally among ties.
Tensor max_backward(const Tensor& grad, const Tensor& x, const Tensor& y, const Axes& axes, bool keepdim);

// Sums `grad` down to `shape`, over the axes that broadcasting expanded `shape` along.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace agf::ops
