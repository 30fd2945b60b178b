#pragma once
// Storage: one allocation on one device, shared by every tensor that views it.
#include <cstddef>
#include <memory>

#include "core/device.h"

namespace agf {

class Storage {
 public:
  // Allocates `bytes` on `device` (64-byte aligned on CPU, from the caching allocator on CUDA).
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

// CPU memory aligned for the widest vector unit (AVX-512: 64 bytes).
void* cpu_allocate(std::size_t bytes);
void cpu_free(void* pointer);

// CUDA memory, implemented by the CUDA backend (throws agf::Error in a build without CUDA).
void* cuda_allocate(std::size_t bytes, int device_index);
void cuda_free(void* pointer, int device_index);

}  // namespace agf
