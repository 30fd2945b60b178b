#pragma once
// fill_uniform and fill_normal on a CUDA tensor (called by core/random.cpp): the values of the CPU fill,
// element for element, from the same Philox stream and the same formulas (core/random_values.h).
#include <cstdint>

#include "core/cuda/strided_index.h"
#include "core/element_type.h"

namespace agf::cuda {

// out[offset(i)] = uniform_value(bits(seed, offset, i), low, high) for i in [0, count), rounded to dtype
// as the CPU rounds (through f32 for f16/bf16). `index` gives the offset of row-major element i.
void fill_uniform_elements(DType dtype, void* out, const StridedIndex<1>& index, int64_t count, uint64_t seed,
                           uint64_t offset, double low, double high, int device);

// out[offset(i)] = normal_value(bits(seed, offset, 2j), bits(seed, offset, 2j + 1), i odd, mean, stddev)
// with j = ⌊i/2⌋.
void fill_normal_elements(DType dtype, void* out, const StridedIndex<1>& index, int64_t count, uint64_t seed,
                          uint64_t offset, double mean, double stddev, int device);

}  // namespace agf::cuda
