// Dropout on a GPU (see dropout_kernels.h). The mask's bits come from cuRAND's Philox
// (core/cuda/curand_philox.h): element i takes the word of cuRAND's position 4·offset + i, which is the CPU's
// Philox4x32::bits(seed, offset, i). Elements go in groups of four, 4g … 4g+3, which share one Philox block;
// a thread takes kGroupsPerThread consecutive groups with one cuRAND state, so that curand_init's cost
// (two blocks) is paid once per run, and curand4 yields each group's four words.
//
// The kept value is in·scale in the compute type with scale = acc_t(1/(1-p)): for f32 and f64 the CPU's
// own product, for f16/bf16 the f32 product rounded once.
#include "core/cuda/curand_philox.h"
#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/dropout_kernels.h"
#include "core/cuda/dispatch.h"
#include "ops/dropout_mask.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kGroupsPerThread = 4;  // 16 elements per cuRAND state

template <class T>
__global__ void dropout_kernel(const T* in, T* out, int64_t count, uint64_t seed, uint64_t offset, float threshold,
                               acc_t<T> scale) {
  using A = acc_t<T>;
  const int64_t groups = (count + 3) / 4;
  const int64_t runs = (groups + kGroupsPerThread - 1) / kGroupsPerThread;
  for (int64_t run = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; run < runs;
       run += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t first_group = run * kGroupsPerThread;
    CurandPhiloxGroups bits(seed, offset, static_cast<uint64_t>(first_group));
    for (int64_t group = first_group; group < first_group + kGroupsPerThread && group < groups; ++group) {
      const Philox4x32::Block words = bits.next();
      for (int lane = 0; lane < 4; ++lane) {
        const int64_t i = group * 4 + lane;
        if (i >= count) break;
        out[i] = from_acc<T>(ops::dropout_keeps(words[lane], threshold) ? to_acc(in[i]) * scale : A(0));
      }
    }
  }
}

}  // namespace

void dropout_apply(DType dtype, const void* in, void* out, int64_t count, double p, uint64_t seed, uint64_t offset,
                   int device) {
  if (count == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    const int64_t runs = ((count + 3) / 4 + kGroupsPerThread - 1) / kGroupsPerThread;
    dropout_kernel<<<blocks_for(runs, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), count, seed, offset, ops::dropout_threshold(p),
        static_cast<acc_t<T>>(1.0 / (1.0 - p)));
    AGF_CUDA_CHECK_LAUNCH(dropout_kernel);
  });
}

}  // namespace agf::cuda
