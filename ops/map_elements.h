#pragma once
// map_elements on the device of its inputs: the CPU loop (ops/cpu/map_elements.h) or, for tensors on a
// GPU, the CUDA map kernel (ops/cuda/map_elements.h) — one call site for both, with one functor from
// ops/elementwise_functors.h holding the formula. Inputs on different devices are refused, naming both.
#include "ops/cpu/map_elements.h"
#include "ops/device_route.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/map_elements.h"
#endif

namespace agf::ops {

template <class F, class... Inputs>
Tensor map_elements(const char* op, const F& f, const Inputs&... inputs) {
  AGF_CUDA_ROUTE(on_cuda(op, inputs...), cuda::map_elements(op, f, inputs...));
  return cpu::map_elements(op, f, inputs...);
}

}  // namespace agf::ops
