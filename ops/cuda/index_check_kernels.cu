// The index scan of index_check_kernels.h: a grid-stride loop in which every thread counts the positions
// it sees that are not ignored and proposes the invalid ones with atomicMin, so the result is the lowest
// invalid position (the one the CPU reports) whatever the thread order. The count is added with one
// atomicAdd per thread (integers: exact in any order). A one-thread kernel then records the failure.
#include <climits>

#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/index_check_kernels.h"

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

// One thread: the lowest bad position and its value into the deferred record, unless an earlier check
// already failed there (the first failure is the one reported).
template <class I>
__global__ void record_first_invalid_kernel(const I* indices, const unsigned long long* scratch, DeferredRecord* record,
                                            unsigned long long check) {
  if (scratch[0] == ULLONG_MAX || record->check != 0) return;
  record->value = static_cast<long long>(indices[scratch[0]]);
  record->position = static_cast<long long>(scratch[0]);
  record->check = check;
}

}  // namespace

void scan_indices_deferred(DType dtype, const void* indices, int64_t count, int64_t upper, bool has_ignore,
                           int64_t ignore, unsigned long long* scratch, const DeferredCheck& check, int device) {
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  AGF_CUDA_CHECK(cudaMemsetAsync(scratch, 0xff, sizeof(unsigned long long), stream));   // no invalid position yet
  AGF_CUDA_CHECK(cudaMemsetAsync(scratch + 1, 0, sizeof(unsigned long long), stream));  // nothing counted yet
  if (count == 0) return;
  dispatch_index_kernel(dtype, [&]<class I>() {
    scan_indices_kernel<<<blocks_for(count, kThreads, 1024), kThreads, 0, stream>>>(
        static_cast<const I*>(indices), count, upper, has_ignore, ignore, scratch);
    AGF_CUDA_CHECK_LAUNCH(scan_indices_kernel);
    record_first_invalid_kernel<I>
        <<<1, 1, 0, stream>>>(static_cast<const I*>(indices), scratch, check.record, check.id);
    AGF_CUDA_CHECK_LAUNCH(record_first_invalid_kernel);
  });
}

}  // namespace agf::cuda
