// The fused attention kernels: the block algorithms of ops/attention_fused.h run by a GPU executor.
//
// Launch shapes (kBlock = fused::Tile<Acc, kHeadDim>::kBlock: 64 rows for f32 up to dk = 128, fewer for
// dk = 256 and for f64, so that the backward's tiles fit in shared memory):
//   forward       one block of 256 threads per (b, h, query tile)     shared: q, k, v tiles + W   (≤ 116 KB)
//   Δ             one thread per query row (b, h, m)                  no shared memory
//   key/value     one block of 256 threads per (b, h, key tile)      shared: q, k, v, g tiles, W, ∂L/∂P,
//   query         one block of 256 threads per (b, h, query tile)    lse, Δ, diagonal sums      (≤ 167 KB)
// Shared memory above 48 KB needs the per-kernel opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize); H100/H200
// allow 227 KB per block. fused_attention_unfit says when a device allows less than a tile needs.
//
// The table gradient: each key/value block sums its pairs' ∂L/∂C per diagonal in shared memory (shared
// atomicAdd) and adds each diagonal sum to ∂L/∂table[δ, h, D] in global memory with one atomicAdd — so the
// table gradient's float rounding depends on the order the threads of a block reach the shared atomics and
// on the order the blocks finish in (not bit-reproducible from run to run, within f32 rounding of the sum).
// ∂L/∂q, ∂L/∂k, ∂L/∂v and the forward are deterministic.
#include <cstdlib>
#include <string>

#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/attention_kernels.h"

namespace agf::ops::cuda {

namespace {

using agf::cuda::acc_t;
using agf::cuda::current_stream;
using agf::cuda::device_t;
using agf::cuda::DeviceGuard;

// Storage <-> compute conversions inside kernels (CUDA's 16-bit types for agf::Half and agf::BFloat16).
template <class T>
struct DeviceIo {
  using Storage = device_t<T>;
  using Acc = acc_t<T>;
  static_assert(std::is_same_v<Acc, fused::compute_t<T>>, "the host and the device must compute in the same type");
  __device__ __forceinline__ static Acc load(const Storage& x) { return agf::cuda::to_acc(x); }
  __device__ __forceinline__ static Storage store(Acc x) { return agf::cuda::from_acc<Storage>(x); }
};

// The executor of the block algorithms on the GPU: each thread runs every phase for itself (its State is
// in registers), __syncthreads() separates phases that share memory, a row's 16 threads (a half-warp: tid =
// ty·16 + tx) reduce by xor-shuffles, and sums into shared or global memory are atomicAdd.
template <class State>
struct GpuBlock {
  State state;

  template <class Body>
  __device__ __forceinline__ void for_threads(Body&& body) {
    body(static_cast<int>(threadIdx.x), state);
  }
  __device__ __forceinline__ void sync() { __syncthreads(); }
  // part[i] = op over the 16 lanes tx = 0..15 that share ty (xor masks 8, 4, 2, 1 stay inside a half-warp).
  // Every thread of the block reaches this call (phases never branch around it), so the full mask is right.
  template <class Op>
  __device__ __forceinline__ void reduce_part(Op op) {
#pragma unroll
    for (int i = 0; i < State::kParts; ++i) {
      auto value = state.part[i];
#pragma unroll
      for (int mask = fused::kSide / 2; mask > 0; mask /= 2)
        value = op(value, __shfl_xor_sync(0xffffffffu, value, mask));
      state.part[i] = value;
    }
  }
  template <class Acc>
  __device__ __forceinline__ void add_shared(Acc* target, Acc value) {
    atomicAdd(target, value);
  }
  template <class Acc>
  __device__ __forceinline__ void add_global(Acc* target, Acc value) {
    atomicAdd(target, value);
  }
};

template <class T>
using DeviceArguments = fused::FusedAttention<device_t<T>, acc_t<T>>;

template <class T>
__device__ __forceinline__ acc_t<T>* shared_tiles() {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  return reinterpret_cast<acc_t<T>*>(shared_memory);
}

template <class T, int kHeadDim>
__global__ void __launch_bounds__(fused::kThreads) fused_forward_kernel(const DeviceArguments<T> A) {
  GpuBlock<fused::ForwardState<acc_t<T>, kHeadDim>> ex;
  fused::forward_block<DeviceIo<T>, kHeadDim>(ex, A, blockIdx.x, shared_tiles<T>());
}

template <class T>
__global__ void fused_row_delta_kernel(const DeviceArguments<T> A) {
  const fused::PairGeometry& P = A.pairs;
  const int64_t rows = P.batch * P.heads * P.queries;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t m = row % P.queries, bh = row / P.queries;
    const int64_t b = bh / P.heads, h = bh % P.heads;
    A.delta[row] = fused::row_delta<DeviceIo<T>>(A.grad.row(b, h, m), A.saved_out.row(b, h, m), P.head_dim);
  }
}

template <class T, int kHeadDim>
__global__ void __launch_bounds__(fused::kThreads) fused_key_value_kernel(const DeviceArguments<T> A) {
  GpuBlock<fused::KeyValueState<acc_t<T>, kHeadDim>> ex;
  fused::key_value_block<DeviceIo<T>, kHeadDim>(ex, A, blockIdx.x, shared_tiles<T>());
}

template <class T, int kHeadDim>
__global__ void __launch_bounds__(fused::kThreads) fused_query_kernel(const DeviceArguments<T> A) {
  GpuBlock<fused::QueryState<acc_t<T>, kHeadDim>> ex;
  fused::query_block<DeviceIo<T>, kHeadDim>(ex, A, blockIdx.x, shared_tiles<T>());
}

// Calls body.template operator()<kHeadDim>() with the compiled head size that serves head_dim.
template <class Body>
void with_head_dim(int64_t head_dim, Body&& body) {
  switch (fused::head_dim_capacity(head_dim)) {
    case 32: return body.template operator()<32>();
    case 64: return body.template operator()<64>();
    case 128: return body.template operator()<128>();
    case 256: return body.template operator()<256>();
  }
  // The op layer routes dk > 256 to the materializing path (fused_attention_unfit); reaching here is a bug.
  std::abort();
}

template <class Kernel, class Arguments>
void launch_tiles(Kernel kernel, const char* name, int64_t blocks, std::size_t shared_bytes, int device,
                  const Arguments& A) {
  if (blocks == 0) return;
  AGF_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
  kernel<<<static_cast<unsigned>(blocks), fused::kThreads, shared_bytes, current_stream(device)>>>(A);
  agf::cuda::check_cuda(cudaGetLastError(), name, __FILE__, __LINE__);
}

template <class Acc, int kHeadDim>
constexpr std::size_t shared_bytes_needed() {
  using Shape = fused::Tile<Acc, kHeadDim>;
  const int elements = Shape::kForwardShared > Shape::kBackwardShared ? Shape::kForwardShared : Shape::kBackwardShared;
  return static_cast<std::size_t>(elements) * sizeof(Acc);
}

}  // namespace

std::string fused_attention_unfit(DType dtype, int64_t head_dim, int device) {
  if (fused::head_dim_capacity(head_dim) == 0) {
    return "head size " + std::to_string(head_dim) + " > 256 (the fused kernels are compiled up to 256)";
  }
  std::size_t needed = 0;
  with_head_dim(head_dim, [&]<int kHeadDim>() {
    needed = dtype == DType::f64 ? shared_bytes_needed<double, kHeadDim>() : shared_bytes_needed<float, kHeadDim>();
  });
  int available = 0;
  AGF_CUDA_CHECK(cudaDeviceGetAttribute(&available, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (needed > static_cast<std::size_t>(available)) {
    return "a tile needs " + std::to_string(needed) + " bytes of shared memory, cuda:" + std::to_string(device) +
           " allows " + std::to_string(available) + " per block";
  }
  return "";
}

template <class T>
void fused_attention_forward(const fused::FusedAttention<T, fused::compute_t<T>>& A, int device) {
  DeviceGuard guard(device);
  const DeviceArguments<T> D = fused::with_storage<device_t<T>>(A);
  with_head_dim(A.pairs.head_dim, [&]<int kHeadDim>() {
    using Shape = fused::Tile<acc_t<T>, kHeadDim>;
    launch_tiles(fused_forward_kernel<T, kHeadDim>, "launch of fused_forward_kernel",
                 fused::query_tile_blocks(A.pairs, Shape::kBlock), Shape::kForwardShared * sizeof(acc_t<T>), device, D);
  });
}

template <class T>
void fused_attention_backward(const fused::FusedAttention<T, fused::compute_t<T>>& A, int device) {
  DeviceGuard guard(device);
  const DeviceArguments<T> D = fused::with_storage<device_t<T>>(A);
  const int64_t rows = A.pairs.batch * A.pairs.heads * A.pairs.queries;
  if (rows > 0) {
    constexpr int kDeltaThreads = 256;
    fused_row_delta_kernel<T>
        <<<agf::cuda::blocks_for(rows, kDeltaThreads), kDeltaThreads, 0, current_stream(device)>>>(D);
    AGF_CUDA_CHECK_LAUNCH(fused_row_delta_kernel);
  }
  with_head_dim(A.pairs.head_dim, [&]<int kHeadDim>() {
    using Shape = fused::Tile<acc_t<T>, kHeadDim>;
    const std::size_t bytes = Shape::kBackwardShared * sizeof(acc_t<T>);
    launch_tiles(fused_key_value_kernel<T, kHeadDim>, "launch of fused_key_value_kernel",
                 fused::key_tile_blocks(A.pairs, Shape::kBlock), bytes, device, D);
    launch_tiles(fused_query_kernel<T, kHeadDim>, "launch of fused_query_kernel",
                 fused::query_tile_blocks(A.pairs, Shape::kBlock), bytes, device, D);
  });
}

#define AGF_FUSED_ATTENTION_INSTANCES(T)                                                               \
  template void fused_attention_forward<T>(const fused::FusedAttention<T, fused::compute_t<T>>&, int); \
  template void fused_attention_backward<T>(const fused::FusedAttention<T, fused::compute_t<T>>&, int);
AGF_FUSED_ATTENTION_INSTANCES(double)
AGF_FUSED_ATTENTION_INSTANCES(float)
AGF_FUSED_ATTENTION_INSTANCES(Half)
AGF_FUSED_ATTENTION_INSTANCES(BFloat16)
#undef AGF_FUSED_ATTENTION_INSTANCES

}  // namespace agf::ops::cuda
