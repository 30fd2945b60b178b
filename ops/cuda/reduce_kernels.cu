// Row reductions on a GPU (see reduce_kernels.h). Two kernel shapes over contiguous rows:
//
// - one warp per row, for rows of at most kWarpRowLimit elements: lane j accumulates elements j, j+32,
//   j+64, ... of the row (consecutive lanes read consecutive addresses), then the 32 partial values
//   are combined by a shuffle tree and lane 0 stores the row's result. 8 warps per block.
// - one block of 256 threads per (row, segment), for longer rows: thread t accumulates elements t,
//   t+256, ... of the segment, each warp combines by shuffles, the 8 warp results meet in shared
//   memory and warp 0 combines them; thread 0 stores.
//
// Every thread accumulates in Acc (f64 for f64, f32 otherwise) from the identity of the combination
// (0 for a sum, -inf for a max). Work is assigned by index only, so results are deterministic.
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/reduce_kernels.h"

namespace agf::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;  // 8 warps per block in both kernels
constexpr int kWarpsPerBlock = kThreads / kWarp;
constexpr int64_t kWarpRowLimit = 1024;  // rows up to this long: one warp per row
constexpr int64_t kBusyBlocks = 1024;    // blocks that keep every SM of an H100/H200 busy several times
constexpr int64_t kMinSegment = 2048;    // a block reduces at least this many elements of a long row

// clang-format off
struct SumCombine {
  template <class Acc> __device__ static Acc identity() { return Acc(0); }
  template <class Acc> __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};
// std::max(a, b) = (a < b) ? b : a: a NaN value never replaces the accumulator, as on the CPU (whose
// loop is accumulator = std::max(accumulator, x)); accumulators start at -inf and so never hold a NaN.
struct MaxCombine {
  template <class Acc> __device__ static Acc identity() { return -std::numeric_limits<Acc>::infinity(); }
  template <class Acc> __device__ static Acc combine(Acc a, Acc b) { return a < b ? b : a; }
};
// clang-format on

// Combines the values of the 32 lanes of a warp; lane 0 ends with the result. All lanes must call it.
template <class Combine, class Acc>
__device__ __forceinline__ Acc warp_reduce(Acc value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    value = Combine::combine(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  return value;
}

template <class Acc>
__device__ __forceinline__ Acc finish(Acc value, ops::ReduceKind kind, int64_t mean_count) {
  return kind == ops::ReduceKind::mean ? value / static_cast<Acc>(mean_count) : value;
}

// Warp w of block b takes rows b·8 + w, then + 8·gridDim.x, ... (the row loop is the same for all 32
// lanes of a warp, so every lane reaches the shuffles).
template <class Combine, class Acc, class In, class Out>
__global__ void reduce_warp_per_row(const In* in, Out* out, int64_t rows, int64_t length, ops::ReduceKind kind,
                                    int64_t mean_count) {
  const int lane = threadIdx.x % kWarp;
  const int64_t first_row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / kWarp;
  for (int64_t row = first_row; row < rows; row += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const In* values = in + row * length;
    Acc accumulator = Combine::template identity<Acc>();
    for (int64_t i = lane; i < length; i += kWarp) {
      accumulator = Combine::combine(accumulator, static_cast<Acc>(to_acc(values[i])));
    }
    accumulator = warp_reduce<Combine>(accumulator);
    if (lane == 0) out[row] = from_acc<Out>(finish(accumulator, kind, mean_count));
  }
}

// Block b takes item b, then b + gridDim.x, ...; item = row · segments + segment (the same loop for
// every thread of the block, so all reach __syncthreads).
template <class Combine, class Acc, class In, class Out>
__global__ void reduce_block_per_segment(const In* in, Out* out, int64_t rows, int64_t length, int64_t segments,
                                         ops::ReduceKind kind, int64_t mean_count) {
  __shared__ Acc warp_results[kWarpsPerBlock];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t segment_length = (length + segments - 1) / segments;
  for (int64_t item = blockIdx.x; item < rows * segments; item += gridDim.x) {
    const int64_t row = item / segments, segment = item % segments;
    const int64_t begin = segment * segment_length;
    const int64_t end = begin + segment_length < length ? begin + segment_length : length;
    const In* values = in + row * length;
    Acc accumulator = Combine::template identity<Acc>();
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
      accumulator = Combine::combine(accumulator, static_cast<Acc>(to_acc(values[i])));
    }
    accumulator = warp_reduce<Combine>(accumulator);
    if (lane == 0) warp_results[warp] = accumulator;
    __syncthreads();
    if (warp == 0) {
      accumulator = lane < kWarpsPerBlock ? warp_results[lane] : Combine::template identity<Acc>();
      accumulator = warp_reduce<Combine>(accumulator);
      if (lane == 0) out[item] = from_acc<Out>(finish(accumulator, kind, mean_count));
    }
    __syncthreads();  // warp 0 has read warp_results before the next item overwrites it
  }
}

template <class Combine, class In, class Out>
void launch_typed(const RowReduction& r, cudaStream_t stream) {
  // f64 accumulation when either side is f64 (an f64 reduction and its partial results), else f32.
  using Acc = std::conditional_t<std::is_same_v<In, double> || std::is_same_v<Out, double>, double, float>;
  const auto* in = static_cast<const device_t<In>*>(r.in);
  auto* out = static_cast<device_t<Out>*>(r.out);
  if (r.segments == 1 && r.length <= kWarpRowLimit) {
    const unsigned blocks = blocks_for(r.rows, kWarpsPerBlock);
    reduce_warp_per_row<Combine, Acc><<<blocks, kThreads, 0, stream>>>(in, out, r.rows, r.length, r.kind, r.mean_count);
    AGF_CUDA_CHECK_LAUNCH(reduce_warp_per_row);
  } else {
    const unsigned blocks = blocks_for(r.rows * r.segments, 1);
    reduce_block_per_segment<Combine, Acc>
        <<<blocks, kThreads, 0, stream>>>(in, out, r.rows, r.length, r.segments, r.kind, r.mean_count);
    AGF_CUDA_CHECK_LAUNCH(reduce_block_per_segment);
  }
}

}  // namespace

int64_t row_reduction_segments(int64_t rows, int64_t length) {
  if (length <= kWarpRowLimit || rows >= kBusyBlocks) return 1;
  const int64_t wanted = (kBusyBlocks + rows - 1) / rows;         // blocks per row to reach kBusyBlocks
  const int64_t most = (length + kMinSegment - 1) / kMinSegment;  // but segments of ≥ kMinSegment elements
  return wanted < most ? wanted : most;
}

void launch_row_reduction(const RowReduction& reduction, int device) {
  if (reduction.rows == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(reduction.in_dtype, [&]<class In>() {
    dispatch_floating_kernel(reduction.out_dtype, [&]<class Out>() {
      if (reduction.kind == ops::ReduceKind::max) {
        launch_typed<MaxCombine, In, Out>(reduction, stream);
      } else {
        launch_typed<SumCombine, In, Out>(reduction, stream);
      }
    });
  });
}

}  // namespace agf::cuda
