#pragma once
// The launcher behind every pointwise op on a GPU (ops/cuda/map_elements.h calls it; the kernels are in
// ops/cuda/map_kernel.cuh). Plain C++, so both the host wrappers and the .cu files include it.
#include <cstdint>

#include "core/cuda/strided_index.h"
#include "core/element_type.h"

namespace agf::cuda {

// The operands of one launch: the output and N inputs, all of one floating element type.
template <int N>
struct MapOperands {
  void* out = nullptr;
  const void* in[N] = {};
  // false: every input is contiguous with the output's shape, so element i is at offset i in all of them.
  // true: `index` gives the offsets (operand 0 = out, operand k + 1 = input k; broadcast axes stride 0).
  bool strided = false;
  StridedIndex<N + 1> index;
};

// out[i] = f(in_0[i], ..., in_{N-1}[i]) for the `count` elements, on `device`'s stream: each input is
// loaded into acc_t of `dtype` (f32 for f16/bf16/f32, f64 for f64), f computes there, and the result is
// rounded once on the store. `dtype` must be f64, f32, f16 or bf16 (the host wrapper checks).
//
// Defined in ops/cuda/map_kernel.cuh and explicitly instantiated for each functor in a .cu file (the
// functors of ops/elementwise_functors.h in ops/cuda/elementwise_kernels.cu); a functor without an
// instantiation is a link error naming launch_map and the functor.
template <int N, class F>
void launch_map(const F& f, DType dtype, const MapOperands<N>& operands, int64_t count, int device);

}  // namespace agf::cuda
