// Dropout on a GPU (see dropout_kernels.h). The mask's bits come from cuRAND's Philox
// (core/cuda/curand_philox.h): element i takes the word of cuRAND's position 4·offset + i, which is the CPU's
// Philox4x32::bits(seed, offset, i), in groups of four elements that share one Philox block, a run of groups
// per cuRAND state (core/cuda/curand_group_loop.cuh).
//
// The kept value is in·scale in the compute type with scale = acc_t(1/(1-p)): for f32 and f64 the CPU's
// own product, for f16/bf16 the f32 product rounded once.
#include "core/cuda/curand_group_loop.cuh"
#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/dropout_kernels.h"
#include "ops/dropout_mask.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void dropout_kernel(const T* in, T* out, int64_t count, uint64_t seed, uint64_t offset, float threshold,
                               acc_t<T> scale) {
  using A = acc_t<T>;
  for_each_curand_group(seed, offset, count, [&](int64_t group, const Philox4x32::Block& words) {
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t i = group * 4 + lane;
      if (i >= count) break;
      out[i] = from_acc<T>(ops::dropout_keeps(words[lane], threshold) ? to_acc(in[i]) * scale : A(0));
    }
  });
}

}  // namespace

void dropout_apply(DType dtype, const void* in, void* out, int64_t count, double p, uint64_t seed, uint64_t offset,
                   int device) {
  if (count == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    dropout_kernel<<<blocks_for(curand_group_runs(count), kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), count, seed, offset, ops::dropout_threshold(p),
        static_cast<acc_t<T>>(1.0 / (1.0 - p)));
    AGF_CUDA_CHECK_LAUNCH(dropout_kernel);
  });
}

}  // namespace agf::cuda
