#pragma once
// Concatenation along an axis; the backward is a list of slices (views) of the gradient.
#include <vector>

#include "core/tensor.h"

namespace agf::ops {

Tensor concat(const std::vector<Tensor>& parts, int64_t axis);
// out = [x_0 | x_1 | ...] along axis  =>  dL/dx_i = g[..., start_i : start_i + n_i, ...]
std::vector<Tensor> concat_backward(const Tensor& grad, const std::vector<Shape>& part_shapes, int64_t axis);

}  // namespace agf::ops
