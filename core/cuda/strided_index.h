#pragma once
// StridedIndex: the offsets of N strided operands at one linear (row-major) element index of a shared
// shape — how a CUDA kernel walks broadcast, transposed or sliced tensors without copying them.
// Passed to kernels by value (it lives in the kernel's parameter space).
//
//   index = Σ_a i_a · Π_{b>a} shape_b      (row-major position in the shape)
//   offset_k = Σ_a i_a · strides_k[a]      (element offset into operand k)
#include <cstdint>

#include "core/host_device.h"

namespace agf::cuda {

inline constexpr int kMaxKernelDims = 8;

template <int N>
struct StridedIndex {
  int dims = 0;
  int64_t shape[kMaxKernelDims] = {};
  int64_t strides[N][kMaxKernelDims] = {};

  AGF_HOST_DEVICE void offsets(int64_t index, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int axis = dims - 1; axis >= 0; --axis) {
      const int64_t extent = shape[axis];
      const int64_t i = index % extent;
      index /= extent;
      for (int k = 0; k < N; ++k) out[k] += i * strides[k][axis];
    }
  }
};

}  // namespace agf::cuda
