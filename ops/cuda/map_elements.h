#pragma once
// map_elements on a GPU: the host side of every pointwise CUDA op (the twin of ops/cpu/map_elements.h).
//
//   out[i] = f(in_0[i], ..., in_{N-1}[i])   with NumPy broadcasting of all inputs to one shape.
//
// Checks the inputs, allocates the output on their device, and launches the map kernel: the contiguous
// one when every input is contiguous with the output's shape, else the strided one, which reads
// broadcast, transposed and sliced inputs in place (no copy). f must have a launch_map instantiation
// (ops/cuda/elementwise_kernels.cu has one for every functor of ops/elementwise_functors.h).
#include <array>

#include "core/cuda/strided_index_host.h"
#include "core/tensor.h"
#include "ops/cuda/map_kernel.h"

namespace agf::ops::cuda {

template <class F, class... Inputs>
Tensor map_elements(const char* op, const F& f, const Inputs&... inputs) {
  constexpr int N = sizeof...(Inputs);
  const std::array<const Tensor*, N> in{&inputs...};
  Shape shape = in[0]->shape();
  for (int k = 0; k < N; ++k) {
    check_defined(*in[k], op, "input");
    check_same_device(*in[0], *in[k], op);
    check_same_dtype(*in[0], *in[k], op);
    shape = broadcast_shapes(shape, in[k]->shape(), op);
  }
  const DType dtype = in[0]->dtype();
  dispatch_any_floating(dtype, op, []<class T>() {});  // integer tensors: an error naming the op
  Tensor out = Tensor::empty(shape, dtype, in[0]->device());

  ::agf::cuda::MapOperands<N> operands;
  operands.out = out.raw_data();
  bool flat = true;
  for (int k = 0; k < N; ++k) {
    operands.in[k] = in[k]->raw_data();
    flat = flat && in[k]->shape() == shape && in[k]->is_contiguous();
  }
  if (!flat) {
    // Broadcast views of each input (stride 0 on the expanded axes), so all walk the output's shape.
    std::array<Tensor, N> expanded;
    std::array<const Strides*, N + 1> strides;
    strides[0] = &out.strides();
    for (int k = 0; k < N; ++k) {
      expanded[k] = in[k]->expand(shape);
      strides[k + 1] = &expanded[k].strides();
    }
    operands.strided = true;
    operands.index = ::agf::cuda::make_strided_index<N + 1>(shape, strides, op);
  }
  ::agf::cuda::launch_map<N>(f, dtype, operands, out.numel(), out.device().index);
  return out;
}

}  // namespace agf::ops::cuda
