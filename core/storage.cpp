#include "core/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

#include "core/block_cache.h"
#include "core/error.h"

namespace agf {

namespace {

constexpr std::size_t kCpuAlignment = 64;

// Large blocks round up to 64 KiB, so that nearby sizes share cached blocks.
std::size_t rounded_size(std::size_t bytes) {
  const std::size_t granule = bytes < kCpuCachedBlock ? kCpuAlignment : (std::size_t{1} << 16);
  return (bytes + granule - 1) / granule * granule;
}

struct CpuCache {
  std::mutex mutex;
  BlockCache blocks;
  std::unordered_map<void*, std::size_t> sizes;  // every large block handed out: its size
};

CpuCache& cpu_cache() {
  static CpuCache* instance = new CpuCache();  // never destroyed: outlives static tensors
  return *instance;
}

void* aligned_block(std::size_t size) {
  void* pointer = std::aligned_alloc(kCpuAlignment, size);
  if (pointer == nullptr) {  // give the cache back to the system and try once more
    cpu_release_cached();
    pointer = std::aligned_alloc(kCpuAlignment, size);
  }
  AGF_CHECK(pointer != nullptr, "out of CPU memory allocating {} bytes", size);
  return pointer;
}

}  // namespace

void* cpu_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t rounded = rounded_size(bytes);
  if (rounded < kCpuCachedBlock) return aligned_block(rounded);
  CpuCache& cache = cpu_cache();
  {
    std::lock_guard lock(cache.mutex);
    std::size_t size = 0;
    // Up to twice the size: token-budget batches change shape from step to step.
    if (void* pointer = cache.blocks.take(rounded, 2 * rounded, &size)) {
      cache.sizes[pointer] = size;
      return pointer;
    }
  }
  void* pointer = aligned_block(rounded);
  std::lock_guard lock(cache.mutex);
  cache.sizes[pointer] = rounded;
  return pointer;
}

void cpu_free(void* pointer, std::size_t bytes) {
  if (pointer == nullptr) return;
  if (rounded_size(bytes) >= kCpuCachedBlock) {
    CpuCache& cache = cpu_cache();
    std::lock_guard lock(cache.mutex);
    const auto it = cache.sizes.find(pointer);
    const std::size_t size = it->second;
    cache.sizes.erase(it);
    if (cache.blocks.bytes() + size <= kCpuCacheLimit) {
      cache.blocks.put(pointer, size);
      return;
    }
  }
  std::free(pointer);
}

std::size_t cpu_release_cached() {
  CpuCache& cache = cpu_cache();
  std::lock_guard lock(cache.mutex);
  const std::size_t bytes = cache.blocks.bytes();
  cache.blocks.release_all([](void* pointer, std::size_t) { std::free(pointer); });
  return bytes;
}

std::size_t cpu_cached_bytes() {
  CpuCache& cache = cpu_cache();
  std::lock_guard lock(cache.mutex);
  return cache.blocks.bytes();
}

Storage::Storage(std::size_t bytes, Device device) : bytes_(bytes), device_(device) {
  data_ = device.is_cpu() ? cpu_allocate(bytes) : cuda_allocate(bytes, device.index);
}

Storage::~Storage() {
  if (data_ == nullptr) return;
  if (device_.is_cpu()) {
    cpu_free(data_, bytes_);
  } else {
    cuda_free(data_, device_.index);
  }
}

#ifndef AGF_WITH_CUDA
void* cuda_allocate(std::size_t, int) { fail("CUDA tensors need agf built with CUDA (-DAGF_CUDA=ON)"); }
void cuda_free(void*, int) {}
int cuda_device_count() { return 0; }
std::string cuda_unavailable_reason() { return "agf was built without CUDA (AGF_CUDA=OFF or no nvcc)"; }
#endif

}  // namespace agf
