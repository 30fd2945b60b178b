// The index scan of index_check_kernels.h: a grid-stride loop in which every thread counts the positions
// it sees that are not ignored and proposes the invalid ones with atomicMin, so the result is the lowest
// invalid position (the one the CPU reports) whatever the thread order. The count is added with one
// atomicAdd per thread (integers: exact in any order).
#include <climits>

#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/index_check_kernels.h"
#include "core/cuda/dispatch.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;

// scratch[0]: lowest invalid position (ULLONG_MAX when none); scratch[1]: counted positions.
template <class I>
__global__ void scan_indices_kernel(const I* indices, int64_t count, int64_t upper, bool has_ignore, int64_t ignore,
                                    unsigned long long* scratch) {
  unsigned long long counted = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t value = static_cast<int64_t>(indices[i]);
    if (has_ignore && value == ignore) continue;
    ++counted;
    if (value < 0 || value >= upper) atomicMin(&scratch[0], static_cast<unsigned long long>(i));
  }
  if (counted) atomicAdd(&scratch[1], counted);
}

}  // namespace

IndexScan scan_indices(DType dtype, const void* indices, int64_t count, int64_t upper, bool has_ignore, int64_t ignore,
                       void* scratch, int device) {
  IndexScan scan;
  if (count == 0) return scan;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  auto* words = static_cast<unsigned long long*>(scratch);
  AGF_CUDA_CHECK(cudaMemsetAsync(words, 0xff, sizeof(unsigned long long), stream));   // no invalid position yet
  AGF_CUDA_CHECK(cudaMemsetAsync(words + 1, 0, sizeof(unsigned long long), stream));  // nothing counted yet
  dispatch_index_kernel(dtype, [&]<class I>() {
    scan_indices_kernel<<<blocks_for(count, kThreads, 1024), kThreads, 0, stream>>>(
        static_cast<const I*>(indices), count, upper, has_ignore, ignore, words);
    AGF_CUDA_CHECK_LAUNCH(scan_indices_kernel);
  });
  unsigned long long host[2] = {0, 0};
  AGF_CUDA_CHECK(cudaMemcpyAsync(host, words, sizeof host, cudaMemcpyDeviceToHost, stream));
  AGF_CUDA_CHECK(cudaStreamSynchronize(stream));
  scan.counted = static_cast<int64_t>(host[1]);
  if (host[0] != ULLONG_MAX) {
    scan.first_invalid = static_cast<int64_t>(host[0]);
    dispatch_index_kernel(dtype, [&]<class I>() {
      I value = 0;
      AGF_CUDA_CHECK(cudaMemcpyAsync(&value, static_cast<const I*>(indices) + scan.first_invalid, sizeof value,
                                     cudaMemcpyDeviceToHost, stream));
      AGF_CUDA_CHECK(cudaStreamSynchronize(stream));
      scan.invalid_value = static_cast<int64_t>(value);
    });
  }
  return scan;
}

}  // namespace agf::cuda
