#pragma once
// Builds a kernel's StridedIndex from tensors' shapes and strides (host side of core/cuda/strided_index.h).
// Unit axes are dropped and axes that are contiguous in every operand are merged, so most launches
// carry one or two axes whatever the tensors' rank.
#include <array>

#include "core/cuda/strided_index.h"
#include "core/error.h"
#include "core/shape.h"

namespace agf::cuda {

template <int N>
StridedIndex<N> make_strided_index(const Shape& shape, const std::array<const Strides*, N>& strides, const char* op) {
  // Collect the non-unit axes, merging axis a into the previous kept axis p when, for every operand,
  // stride_p == stride_a · shape_a (p then steps over a exactly).
  Shape kept_shape;
  std::array<Strides, N> kept_strides;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] == 1) continue;
    bool mergeable = !kept_shape.empty();
    for (int k = 0; k < N && mergeable; ++k) {
      mergeable = kept_strides[k].back() == (*strides[k])[axis] * shape[axis];
    }
    if (mergeable) {
      kept_shape.back() *= shape[axis];
      for (int k = 0; k < N; ++k) kept_strides[k].back() = (*strides[k])[axis];
      continue;
    }
    kept_shape.push_back(shape[axis]);
    for (int k = 0; k < N; ++k) kept_strides[k].push_back((*strides[k])[axis]);
  }
  AGF_CHECK(static_cast<int>(kept_shape.size()) <= kMaxKernelDims,
            "{}: a CUDA kernel walks at most {} non-mergeable axes, shape {} has {}", op, kMaxKernelDims,
            shape_string(shape), kept_shape.size());
  StridedIndex<N> index;
  index.dims = static_cast<int>(kept_shape.size());
  for (int axis = 0; axis < index.dims; ++axis) {
    index.shape[axis] = kept_shape[axis];
    for (int k = 0; k < N; ++k) index.strides[k][axis] = kept_strides[k][axis];
  }
  return index;
}

}  // namespace agf::cuda
