#pragma once
// map_elements: the single elementwise loop behind every pointwise CPU op and its backward.
//
//   out[i] = f(in_0[i], ..., in_{N-1}[i])   with NumPy broadcasting of all inputs to one shape.
//
// Contiguous inputs of the output's shape take a flat, vectorizable, OpenMP-parallel loop; any other
// layout (broadcast, transposed, sliced) walks the strides with for_each_strided, copying nothing.
#include <array>
#include <cstdint>
#include <utility>

#include "core/strided_loop.h"
#include "core/tensor.h"

namespace agf::cpu {

template <class F, class... Inputs>
Tensor map_elements(const char* op, F f, const Inputs&... inputs) {
  constexpr int N = sizeof...(Inputs);
  const std::array<const Tensor*, N> in{&inputs...};
  Shape shape = in[0]->shape();
  for (int k = 0; k < N; ++k) {
    check_defined(*in[k], op, "input");
    check_cpu(*in[k], op);
    check_same_dtype(*in[0], *in[k], op);
    shape = broadcast_shapes(shape, in[k]->shape(), op);
  }
  Tensor out = Tensor::empty(shape, in[0]->dtype(), in[0]->device());
  dispatch_floating(out.dtype(), op, [&]<class T>() {
    T* result = out.data<T>();
    std::array<const T*, N> source;
    bool flat = true;
    for (int k = 0; k < N; ++k) {
      source[k] = in[k]->template data<T>();
      flat = flat && in[k]->shape() == shape && in[k]->is_contiguous();
    }
    if (flat) {
      const int64_t count = out.numel();
      auto apply = [&]<std::size_t... K>(std::index_sequence<K...>) {
        // firstprivate: each thread's own copy of the pointers and the functor. Shared, they are read through
        // the parallel region's argument block after every store (the store might have changed them), and
        // the loop stays scalar, with a branch per element for a select such as ReLU's backward.
        T* out = result;
        std::array<const T*, N> operand = source;
#pragma omp parallel for simd schedule(static) if (count >= kParallelGrain) firstprivate(out, operand, f)
        for (int64_t i = 0; i < count; ++i) out[i] = f(operand[K][i]...);
      };
      apply(std::make_index_sequence<N>{});
      return;
    }
    // Broadcast views of each input, so every operand walks the output's index space.
    std::array<Tensor, N> expanded;
    std::array<const Strides*, N + 1> strides;
    strides[0] = &out.strides();
    for (int k = 0; k < N; ++k) {
      expanded[k] = in[k]->expand(shape);
      strides[k + 1] = &expanded[k].strides();
    }
    auto apply = [&]<std::size_t... K>(std::index_sequence<K...>) {
      for_each_strided<N + 1>(shape, strides, [&](const std::array<int64_t, N + 1>& at) {
        result[at[0]] = f(source[K][at[K + 1]]...);
      });
    };
    apply(std::make_index_sequence<N>{});
  });
  return out;
}

}  // namespace agf::cpu
