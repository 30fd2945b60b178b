// Random fills on a GPU (see random_kernels.h). The words come from cuRAND's Philox
// (core/cuda/curand_philox.h): element e takes cuRAND's position 4·offset + e, which is the CPU's
// Philox4x32::bits(seed, offset, e), in groups of four elements (one Philox block), a run of groups per
// cuRAND state (core/cuda/curand_group_loop.cuh). A Box–Muller pair (2j, 2j+1) never straddles two groups.
#include <type_traits>

#include "core/cuda/curand_group_loop.cuh"
#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/random_kernels.h"
#include "core/cuda/runtime.h"
#include "core/random_values.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;

// double -> the stored type, rounding as the CPU's from_double does (f16/bf16 through f32).
template <class T>
__device__ __forceinline__ device_t<T> round_to(double value) {
  if constexpr (std::is_same_v<T, double>) return value;
  else if constexpr (std::is_same_v<T, float>) return static_cast<float>(value);
  else return from_acc<device_t<T>>(static_cast<float>(value));
}

// Normal = false: out = uniform_value(word, a = low, b = high).
// Normal = true:  out = normal_value(words of the element's pair, a = mean, b = stddev).
template <class T, bool Normal>
__global__ void fill_kernel(device_t<T>* out, StridedIndex<1> index, int64_t count, uint64_t seed, uint64_t offset,
                            double a, double b) {
  for_each_curand_group(seed, offset, count, [&](int64_t group, const Philox4x32::Block& words) {
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t element = group * 4 + lane;
      if (element >= count) break;
      double value;
      if constexpr (Normal) {
        const int first = lane & ~1;  // the pair's first lane: 0 or 2
        value = normal_value(words[first], words[first + 1], (lane & 1) != 0, a, b);
      } else {
        value = uniform_value(words[lane], a, b);
      }
      int64_t at[1];
      index.offsets(element, at);
      out[at[0]] = round_to<T>(value);
    }
  });
}

template <bool Normal>
void launch_fill(DType dtype, void* out, const StridedIndex<1>& index, int64_t count, uint64_t seed, uint64_t offset,
                 double a, double b, int device) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const unsigned blocks = blocks_for(curand_group_runs(count), kThreads);
  cudaStream_t stream = current_stream(device);
  dispatch_element_type(dtype, [&]<class T>() {
    if constexpr (!std::is_integral_v<T>) {  // core/random.cpp has refused integer tensors
      fill_kernel<T, Normal>
          <<<blocks, kThreads, 0, stream>>>(static_cast<device_t<T>*>(out), index, count, seed, offset, a, b);
      AGF_CUDA_CHECK_LAUNCH(fill_kernel);
    }
  });
}

}  // namespace

void fill_uniform_elements(DType dtype, void* out, const StridedIndex<1>& index, int64_t count, uint64_t seed,
                           uint64_t offset, double low, double high, int device) {
  launch_fill<false>(dtype, out, index, count, seed, offset, low, high, device);
}

void fill_normal_elements(DType dtype, void* out, const StridedIndex<1>& index, int64_t count, uint64_t seed,
                          uint64_t offset, double mean, double stddev, int device) {
  launch_fill<true>(dtype, out, index, count, seed, offset, mean, stddev, device);
}

}  // namespace agf::cuda
