// CUDA device memory through a caching allocator: freed blocks are kept in per-device free lists keyed
// by their rounded size and handed out again, because cudaMalloc/cudaFree synchronize the device and
// cost far more than a training step's worth of small tensors. Compiled only with the CUDA backend.
#ifdef AGF_WITH_CUDA
#include <cuda_runtime.h>

#include <mutex>
#include <unordered_map>

#include "core/block_cache.h"
#include "core/error.h"
#include "core/storage.h"

namespace agf {

namespace {

// Sizes round up to 512 bytes (small) or 2 MiB (large), so nearby requests share cached blocks.
std::size_t rounded_size(std::size_t bytes) {
  const std::size_t granule = bytes < (1u << 20) ? 512 : (2u << 20);
  return (bytes + granule - 1) / granule * granule;
}

class CachingAllocator {
 public:
  void* allocate(std::size_t bytes, int device) {
    const std::size_t size = rounded_size(bytes);
    std::lock_guard lock(mutex_);
    std::size_t cached_size = 0;
    if (void* pointer = free_[device].take(size, size * 2, &cached_size)) {
      sizes_[pointer] = cached_size;
      return pointer;
    }
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    void* pointer = nullptr;
    cudaError_t status = cudaMalloc(&pointer, size);
    if (status == cudaErrorMemoryAllocation) {  // return the cache to the driver and try once more
      cudaGetLastError();
      release_cached(device);
      status = cudaMalloc(&pointer, size);
    }
    cudaSetDevice(previous);
    AGF_CHECK(status == cudaSuccess, "cudaMalloc({} bytes) on cuda:{} failed: {}", size, device,
              cudaGetErrorString(status));
    sizes_[pointer] = size;
    return pointer;
  }

  void release(void* pointer, int device) {
    std::lock_guard lock(mutex_);
    auto it = sizes_.find(pointer);
    if (it == sizes_.end()) return;
    free_[device].put(pointer, it->second);
    sizes_.erase(it);
  }

 private:
  // Called with `device` current. A block is cached as soon as its tensor dies, which is when the last
  // kernel using it has been queued, not run: wait for the device before handing blocks back to the
  // driver (cudaFree only "may" synchronise).
  void release_cached(int device) {
    if (free_[device].empty()) return;
    cudaDeviceSynchronize();
    free_[device].release_all([](void* pointer, std::size_t) { cudaFree(pointer); });
  }

  std::mutex mutex_;
  std::unordered_map<int, BlockCache> free_;
  std::unordered_map<void*, std::size_t> sizes_;
};

CachingAllocator& allocator() {
  static CachingAllocator* instance = new CachingAllocator();  // never destroyed: outlives static tensors
  return *instance;
}

}  // namespace

void* cuda_allocate(std::size_t bytes, int device_index) {
  if (bytes == 0) return nullptr;
  return allocator().allocate(bytes, device_index);
}

void cuda_free(void* pointer, int device_index) { allocator().release(pointer, device_index); }

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device: ") + cudaGetErrorString(status);
  }
  return count == 0 ? "no CUDA device present" : "";
}

}  // namespace agf
#endif  // AGF_WITH_CUDA
