#pragma once
// Row-wise kernels over the last axis (softmax, log_softmax, layer_norm, cross_entropy), nvcc only.
//
// A row of `columns` contiguous elements is owned by a team of `Threads` threads:
//   * columns ≤ kWarpRowLimit: one warp per row (Threads = 32), blockDim = (32, kRowsPerBlock), so a block
//     holds kRowsPerBlock rows and threadIdx.y picks the row;
//   * longer rows (a vocabulary of 50,000): one block of kBlockThreads threads per row, blockDim = (Threads, 1).
// In both, row = blockIdx.x·blockDim.y + threadIdx.y, and thread `threadIdx.x` visits columns
// threadIdx.x, threadIdx.x + Threads, …  The reductions below combine the team's per-thread values and
// hand the row's total to every thread of the team; they are deterministic (a fixed combination order),
// and every thread receives bit-identical totals.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"

namespace agf::cuda {

inline constexpr int64_t kWarpRowLimit = 1024;
inline constexpr int kRowsPerBlock = 8;
inline constexpr int kBlockThreads = 512;
inline constexpr unsigned kFullMask = 0xffffffffu;

// Threads in a block of teams of `threads`: the bound each row kernel declares (__launch_bounds__), so that
// nvcc keeps registers within what a full block of 256 or 512 threads may use.
__host__ __device__ constexpr int team_block_threads(int threads) {
  return threads == 32 ? 32 * kRowsPerBlock : threads;
}

// Launches body.template operator()<Threads>(grid, block) with the team size for rows of `columns`.
template <class Body>
void launch_rows(int64_t rows, int64_t columns, Body&& body) {
  if (columns <= kWarpRowLimit) {
    const dim3 block(32, kRowsPerBlock);
    const dim3 grid(static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock));
    body.template operator()<32>(grid, block);
  } else {
    body.template operator()<kBlockThreads>(dim3(static_cast<unsigned>(rows)), dim3(kBlockThreads));
  }
}

// The row this thread's team owns.
__device__ __forceinline__ int64_t team_row() { return static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; }

// Precise exp, log and sqrt in the compute type (no fast-math intrinsics).
__device__ __forceinline__ float acc_exp(float x) { return ::expf(x); }
__device__ __forceinline__ double acc_exp(double x) { return ::exp(x); }
__device__ __forceinline__ float acc_log(float x) { return ::logf(x); }
__device__ __forceinline__ double acc_log(double x) { return ::log(x); }
__device__ __forceinline__ float acc_sqrt(float x) { return ::sqrtf(x); }
__device__ __forceinline__ double acc_sqrt(double x) { return ::sqrt(x); }

template <class A>
__device__ __forceinline__ A warp_sum(A value) {
  // Butterfly: after step k every lane holds the sum of its aligned group of 2^k lanes; partners add the
  // same two numbers (in swapped order, which addition does not notice), so all lanes end bit-identical.
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(kFullMask, value, offset);
  return value;
}

// Σ over the team of `value`. `scratch`: __shared__ storage of at least Threads/32 elements (unused for a warp).
// In block mode every thread of the block must call it (it synchronises the block).
template <int Threads, class A>
__device__ __forceinline__ A team_sum(A value, A* scratch) {
  value = warp_sum(value);
  if constexpr (Threads > 32) {
    constexpr int kWarps = Threads / 32;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    __syncthreads();  // a previous call's readers are done with scratch
    if (lane == 0) scratch[warp] = value;
    __syncthreads();
    // Every warp reduces the same kWarps partials in the same order: identical totals in every warp.
    value = warp_sum(lane < kWarps ? scratch[lane] : A(0));
  }
  return value;
}

// Online softmax statistics of a set of values: the maximum and Σ exp(x - max).
template <class A>
struct MaxSum {
  A max;
  A sum;
};

template <class A>
__device__ __forceinline__ MaxSum<A> empty_max_sum() {
  return {-INFINITY, A(0)};
}

// Adds one value. exp(-inf) = 0 contributes nothing; skipping -inf also avoids exp(-inf - (-inf)) = NaN
// while the running maximum is still -inf (rows that start with masked entries).
template <class A>
__device__ __forceinline__ void add_value(MaxSum<A>& stats, A x) {
  if (x == -INFINITY) return;
  if (x > stats.max) {
    stats.sum = stats.sum * acc_exp(stats.max - x) + A(1);
    stats.max = x;
  } else {
    stats.sum += acc_exp(x - stats.max);
  }
}

template <class A>
__device__ __forceinline__ MaxSum<A> combine(MaxSum<A> a, MaxSum<A> b) {
  const A top = a.max > b.max ? a.max : b.max;
  if (top == -INFINITY) return {top, A(0)};  // both empty
  return {top, a.sum * acc_exp(a.max - top) + b.sum * acc_exp(b.max - top)};
}

template <class A>
__device__ __forceinline__ MaxSum<A> warp_max_sum(MaxSum<A> stats) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const MaxSum<A> other{__shfl_xor_sync(kFullMask, stats.max, offset), __shfl_xor_sync(kFullMask, stats.sum, offset)};
    stats = combine(stats, other);
  }
  // combine(a, b) and combine(b, a) may round differently once multiply-adds are fused; lane 0's result is the row's.
  return {__shfl_sync(kFullMask, stats.max, 0), __shfl_sync(kFullMask, stats.sum, 0)};
}

// The team's combined statistics; `scratch_max`, `scratch_sum` as for team_sum.
template <int Threads, class A>
__device__ __forceinline__ MaxSum<A> team_max_sum(MaxSum<A> stats, A* scratch_max, A* scratch_sum) {
  stats = warp_max_sum(stats);
  if constexpr (Threads > 32) {
    constexpr int kWarps = Threads / 32;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    __syncthreads();
    if (lane == 0) {
      scratch_max[warp] = stats.max;
      scratch_sum[warp] = stats.sum;
    }
    __syncthreads();
    stats = lane < kWarps ? MaxSum<A>{scratch_max[lane], scratch_sum[lane]} : empty_max_sum<A>();
    stats = warp_max_sum(stats);
  }
  return stats;
}

}  // namespace agf::cuda
