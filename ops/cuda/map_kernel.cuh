#pragma once
// The definition of launch_map (ops/cuda/map_kernel.h): two grid-stride kernels, one thread per output
// element at a time. nvcc only: a .cu file includes this and instantiates launch_map for its functors:
//
//   template void launch_map<2, ops::functors::Add>(const ops::functors::Add&, DType, const MapOperands<2>&,
//                                                   int64_t, int);
#include <cstdlib>
#include <utility>

#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/map_kernel.h"

namespace agf::cuda {

namespace map_detail {

constexpr int kThreads = 256;

template <class T, int N>
struct InputPointers {
  const device_t<T>* at[N];
};

// f(in_0[offset_0], ..., in_{N-1}[offset_{N-1}]) in acc_t<T>, rounded once to T.
template <class T, int N, class F, std::size_t... K>
__device__ __forceinline__ device_t<T> compute(const F& f, const InputPointers<T, N>& in, const int64_t* offset,
                                               std::index_sequence<K...>) {
  return from_acc<device_t<T>>(f(static_cast<acc_t<T>>(to_acc(in.at[K][offset[K]]))...));
}

// Every operand contiguous in the output's shape: element i is at offset i everywhere, no index math.
template <class T, int N, class F>
__global__ void map_contiguous_kernel(F f, device_t<T>* out, InputPointers<T, N> in, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t offset[N];
    for (int k = 0; k < N; ++k) offset[k] = i;
    out[i] = compute<T, N>(f, in, offset, std::make_index_sequence<N>{});
  }
}

// Any layout (broadcast inputs with stride 0, transposed or sliced views): the StridedIndex turns the
// row-major position i in the output's shape into each operand's element offset.
template <class T, int N, class F>
__global__ void map_strided_kernel(F f, device_t<T>* out, InputPointers<T, N> in, StridedIndex<N + 1> index,
                                   int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t offset[N + 1];
    index.offsets(i, offset);
    out[offset[0]] = compute<T, N>(f, in, offset + 1, std::make_index_sequence<N>{});
  }
}

template <class T, int N, class F>
void launch_typed(const F& f, const MapOperands<N>& operands, int64_t count, cudaStream_t stream) {
  InputPointers<T, N> in;
  for (int k = 0; k < N; ++k) in.at[k] = static_cast<const device_t<T>*>(operands.in[k]);
  device_t<T>* out = static_cast<device_t<T>*>(operands.out);
  const unsigned blocks = blocks_for(count, kThreads);
  if (operands.strided) {
    map_strided_kernel<T, N, F><<<blocks, kThreads, 0, stream>>>(f, out, in, operands.index, count);
    AGF_CUDA_CHECK_LAUNCH(map_strided_kernel);
  } else {
    map_contiguous_kernel<T, N, F><<<blocks, kThreads, 0, stream>>>(f, out, in, count);
    AGF_CUDA_CHECK_LAUNCH(map_contiguous_kernel);
  }
}

}  // namespace map_detail

template <int N, class F>
void launch_map(const F& f, DType dtype, const MapOperands<N>& operands, int64_t count, int device) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  switch (dtype) {
    case DType::f64: return map_detail::launch_typed<double, N>(f, operands, count, stream);
    case DType::f32: return map_detail::launch_typed<float, N>(f, operands, count, stream);
    case DType::f16: return map_detail::launch_typed<Half, N>(f, operands, count, stream);
    case DType::bf16: return map_detail::launch_typed<BFloat16, N>(f, operands, count, stream);
    default: std::abort();  // the host wrapper refused integer dtypes with an error naming the op
  }
}

}  // namespace agf::cuda
