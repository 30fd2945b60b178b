#pragma once
// The one N-dimensional loop every strided CPU kernel uses.
//
// for_each_strided<K>(shape, {strides_0, ..., strides_{K-1}}, body) visits every index of `shape` in
// row-major order and calls body(offsets), where offsets[k] = Σ_axis index[axis] · strides_k[axis]:
// the element offset of operand k. Broadcast operands pass stride 0 on broadcast axes. The index
// space is split into contiguous chunks across OpenMP threads; within a chunk the innermost axis is a
// tight loop with additive offsets, so no division happens per element.
#include <omp.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace agf {

// Work below this many elements runs on one thread: spawning threads costs more than it saves.
inline constexpr int64_t kParallelGrain = 32768;

template <int K, class Body>
void for_each_strided(const Shape& shape, const std::array<const Strides*, K>& strides, Body&& body) {
  const int64_t total = shape_numel(shape);
  if (total == 0) return;
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) {
    std::array<int64_t, K> offsets{};
    body(offsets);
    return;
  }
  const int64_t inner = shape[rank - 1];
  std::array<int64_t, K> inner_stride;
  for (int k = 0; k < K; ++k) inner_stride[k] = (*strides[k])[rank - 1];
  const int64_t rows = total / inner;

  auto run_rows = [&](int64_t row_begin, int64_t row_end) {
    // Decompose row_begin into an index over the outer axes once, then carry.
    std::vector<int64_t> index(rank, 0);
    int64_t remainder = row_begin;
    for (int axis = rank - 2; axis >= 0; --axis) {
      index[axis] = remainder % shape[axis];
      remainder /= shape[axis];
    }
    std::array<int64_t, K> row_offset{};
    for (int k = 0; k < K; ++k) {
      for (int axis = 0; axis < rank - 1; ++axis) row_offset[k] += index[axis] * (*strides[k])[axis];
    }
    for (int64_t row = row_begin; row < row_end; ++row) {
      std::array<int64_t, K> offsets = row_offset;
      for (int64_t i = 0; i < inner; ++i) {
        body(offsets);
        for (int k = 0; k < K; ++k) offsets[k] += inner_stride[k];
      }
      // advance the outer index by one row (odometer carry)
      for (int axis = rank - 2; axis >= 0; --axis) {
        ++index[axis];
        for (int k = 0; k < K; ++k) row_offset[k] += (*strides[k])[axis];
        if (index[axis] < shape[axis]) break;
        for (int k = 0; k < K; ++k) row_offset[k] -= index[axis] * (*strides[k])[axis];
        index[axis] = 0;
      }
    }
  };

  const int threads = total >= kParallelGrain ? omp_get_max_threads() : 1;
  if (threads <= 1 || rows < 2) {
    run_rows(0, rows);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int thread = omp_get_thread_num();
    const int count = omp_get_num_threads();
    const int64_t begin = rows * thread / count;
    const int64_t end = rows * (thread + 1) / count;
    if (begin < end) run_rows(begin, end);
  }
}

// Parallel loop over [0, count) with the same grain rule, for flat (contiguous) kernels.
template <class Body>
void parallel_for(int64_t count, int64_t cost_per_item, Body&& body) {
  if (count * cost_per_item < kParallelGrain) {
    for (int64_t i = 0; i < count; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) body(i);
}

}  // namespace agf
