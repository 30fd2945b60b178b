#pragma once
// Device routing: every public op runs on the device its tensors live on. The CPU implementation in
// ops/cpu/ starts with
//
//   AGF_CUDA_ROUTE(on_cuda("softmax", x), cuda::softmax_forward(x));
//
// which, in a build with CUDA, hands CUDA tensors to the CUDA implementation in ops/cuda/. on_cuda
// refuses tensors on different devices with an error naming the op and both tensors; undefined
// tensors (optional arguments) are ignored.
#include "core/tensor.h"

namespace agf::ops {

namespace detail {
bool any_on_cuda(const char* op, std::initializer_list<const Tensor*> tensors);
}

template <class... Tensors>
bool on_cuda(const char* op, const Tensors&... tensors) {
  return detail::any_on_cuda(op, {&tensors...});
}

}  // namespace agf::ops

#ifdef AGF_WITH_CUDA
#define AGF_CUDA_ROUTE(condition, call) \
  if (condition) return call
#else
// No tensor can live on a GPU in this build; the device check still runs.
#define AGF_CUDA_ROUTE(condition, call) (void)(condition)
#endif
