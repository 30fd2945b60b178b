#pragma once
// Storage: one allocation on one device, shared by every tensor that views it.
#include <cstddef>
#include <memory>

#include "core/device.h"

namespace agf {

class Storage {
 public:
  // Allocates `bytes` on `device` (64-byte aligned on CPU; large blocks from a caching allocator on both).
  Storage(std::size_t bytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Device device_;
};

// CPU memory aligned for the widest vector unit (AVX-512: 64 bytes). Blocks of kCpuCachedBlock bytes and
// more are cached when freed (core/block_cache.h), up to kCpuCacheLimit bytes in all, and a request takes a
// cached block of up to twice its size: a fresh large block costs the kernel a page fault and a zeroed page
// per 4 KiB on first touch, a tenth of a training step. When memory runs out the cache is released first.
inline constexpr std::size_t kCpuCachedBlock = std::size_t{1} << 18;  // 256 KiB
inline constexpr std::size_t kCpuCacheLimit = std::size_t{4} << 30;   // 4 GiB
void* cpu_allocate(std::size_t bytes);
void cpu_free(void* pointer, std::size_t bytes);  // bytes: as passed to cpu_allocate
// Returns every cached CPU block to the system; the bytes the cache held before.
std::size_t cpu_release_cached();
// The bytes held by the CPU cache now (freed, not yet reused).
std::size_t cpu_cached_bytes();

// CUDA memory, implemented by the CUDA backend (throws agf::Error in a build without CUDA).
void* cuda_allocate(std::size_t bytes, int device_index);
void cuda_free(void* pointer, int device_index);

}  // namespace agf
