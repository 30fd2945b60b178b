// Adam and gradient clipping on a GPU (see adam_kernels.h). Elementwise kernels are grid-stride loops
// over the flat tensor; the sum of squares is a two-pass reduction:
//   pass 1  blocks = min(kSquarePartials, ⌈count / kThreads⌉) (a function of the size only), each block
//           sums a grid-stride share of g² in f64 and writes partials[block] (unused partials are zeroed);
//   pass 2  one block adds the kSquarePartials partials in a fixed tree and writes *slot.
#include <type_traits>

#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/row_reduce.cuh"
#include "train/cuda/adam_kernels.h"

namespace agf::train::cuda {

namespace {

using agf::cuda::acc_t;
using agf::cuda::device_t;
using agf::cuda::from_acc;
using agf::cuda::to_acc;

constexpr int kThreads = 256;

template <class T>
__global__ void adam_kernel(T* theta, T* m, T* v, const T* grad, int64_t count, AdamConstants constants) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double theta_i = to_acc(theta[i]), m_i = to_acc(m[i]), v_i = to_acc(v[i]);
    train::adam_update(theta_i, m_i, v_i, to_acc(grad[i]), constants);
    m[i] = from_acc<T>(m_i);
    v[i] = from_acc<T>(v_i);
    theta[i] = from_acc<T>(theta_i);
  }
}

template <class T>
__global__ void square_partials_kernel(const T* grad, int64_t count, double* partials) {
  __shared__ double scratch[kThreads / 32];
  double total = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double g = to_acc(grad[i]);
    total += g * g;
  }
  total = agf::cuda::team_sum<kThreads>(total, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
  // Blocks past the grid leave their partials alone: the grid zeroes them below.
  if (blockIdx.x == 0) {
    for (int b = gridDim.x + threadIdx.x; b < kSquarePartials; b += blockDim.x) partials[b] = 0.0;
  }
}

__global__ void sum_partials_kernel(const double* partials, double* slot) {
  __shared__ double scratch[kSquarePartials / 32];
  const double total = agf::cuda::team_sum<kSquarePartials>(partials[threadIdx.x], scratch);
  if (threadIdx.x == 0) *slot = total;
}

template <class T>
__global__ void scale_kernel(T* grad, int64_t count, double scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    grad[i] = from_acc<T>(static_cast<double>(to_acc(grad[i])) * scale);
  }
}

}  // namespace

void adam_update_elements(DType dtype, void* theta, void* m, void* v, const void* grad, int64_t count,
                          const AdamConstants& constants, int device) {
  if (count == 0) return;
  agf::cuda::DeviceGuard guard(device);
  cudaStream_t stream = agf::cuda::current_stream(device);
  agf::cuda::dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    adam_kernel<<<agf::cuda::blocks_for(count, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(theta), static_cast<T*>(m), static_cast<T*>(v), static_cast<const T*>(grad), count, constants);
    AGF_CUDA_CHECK_LAUNCH(adam_kernel);
  });
}

void sum_of_squares(DType dtype, const void* grad, int64_t count, double* partials, double* slot, int device) {
  agf::cuda::DeviceGuard guard(device);
  cudaStream_t stream = agf::cuda::current_stream(device);
  agf::cuda::dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    const unsigned blocks = agf::cuda::blocks_for(count, kThreads, kSquarePartials);
    square_partials_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(grad), count, partials);
    AGF_CUDA_CHECK_LAUNCH(square_partials_kernel);
  });
  sum_partials_kernel<<<1, kSquarePartials, 0, stream>>>(partials, slot);
  AGF_CUDA_CHECK_LAUNCH(sum_partials_kernel);
}

void scale_in_place(DType dtype, void* grad, int64_t count, double scale, int device) {
  if (count == 0) return;
  agf::cuda::DeviceGuard guard(device);
  cudaStream_t stream = agf::cuda::current_stream(device);
  agf::cuda::dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    scale_kernel<<<agf::cuda::blocks_for(count, kThreads), kThreads, 0, stream>>>(static_cast<T*>(grad), count, scale);
    AGF_CUDA_CHECK_LAUNCH(scale_kernel);
  });
}

}  // namespace agf::train::cuda
