#include "ops/concat.h"

namespace agf::ops {

Tensor concat(const std::vector<Tensor>& parts, int64_t axis) {
  AGF_CHECK(!parts.empty(), "concat: no tensors given");
  const Tensor& first = parts[0];
  check_defined(first, "concat", "parts[0]");
  axis = normalize_axis(axis, first.dim(), "concat");
  Shape shape = first.shape();
  shape[axis] = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    check_defined(parts[i], "concat", "part");
    check_same_dtype(first, parts[i], "concat");
    check_same_device(first, parts[i], "concat");
    bool compatible = parts[i].dim() == first.dim();
    for (int64_t d = 0; compatible && d < first.dim(); ++d) compatible = d == axis || parts[i].size(d) == first.size(d);
    AGF_CHECK(compatible, "concat: part {} is {} but part 0 is {} (all axes but {} must match)", i,
              parts[i].description(), first.description(), axis);
    shape[axis] += parts[i].size(axis);
  }
  Tensor out = Tensor::empty(shape, first.dtype(), first.device());
  int64_t start = 0;
  for (const Tensor& part : parts) {
    Tensor destination = out.slice(axis, start, start + part.size(axis));
    destination.copy_from(part);
    start += part.size(axis);
  }
  return out;
}

std::vector<Tensor> concat_backward(const Tensor& grad, const std::vector<Shape>& part_shapes, int64_t axis) {
  axis = normalize_axis(axis, grad.dim(), "concat_backward");
  std::vector<Tensor> grads;
  int64_t start = 0;
  for (const Shape& shape : part_shapes) {
    grads.push_back(grad.slice(axis, start, start + shape[axis]));
    start += shape[axis];
  }
  return grads;
}

}  // namespace agf::ops
