#pragma once
// The CUDA row reduction behind sum, mean and max on a GPU (ops/cuda/reduce.cpp plans the passes).
// Plain C++, so both the host wrapper and reduce_kernels.cu include it.
#include <cstdint>

#include "core/element_type.h"
#include "ops/reduce_kind.h"

namespace agf::cuda {

// One pass over `rows` contiguous rows of `length` elements, each row cut into `segments` consecutive
// segments of ⌈length/segments⌉ elements (the last may be shorter):
//
//   out[row · segments + s] = reduce(in[row · length + i] for i in segment s of the row)
//
// The sum of an empty segment is 0, its max -inf. For kind == mean the result is divided by
// `mean_count` (give the full row length, also when this pass reduces partial results); the partial
// passes of a mean are sums. Accumulation is in f64 when either dtype is f64, else in f32; the result is
// rounded once to `out_dtype`. Deterministic: a fixed tree of additions for given sizes.
struct RowReduction {
  ops::ReduceKind kind = ops::ReduceKind::sum;
  DType in_dtype = DType::f32;
  const void* in = nullptr;
  DType out_dtype = DType::f32;
  void* out = nullptr;
  int64_t rows = 0;
  int64_t length = 0;
  int64_t segments = 1;
  int64_t mean_count = 0;
};

// How many segments a row of `length` elements should be cut into so that `rows` rows keep the GPU
// busy: 1 when there are enough rows or they are short; then a second pass (one warp per row) reduces
// the [rows, segments] partial results.
int64_t row_reduction_segments(int64_t rows, int64_t length);

void launch_row_reduction(const RowReduction& reduction, int device);

}  // namespace agf::cuda
