#include "core/storage.h"

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace agf {

constexpr std::size_t kCpuAlignment = 64;

void* cpu_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t rounded = (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  void* pointer = std::aligned_alloc(kCpuAlignment, rounded);
  AGF_CHECK(pointer != nullptr, "out of CPU memory allocating {} bytes", bytes);
  return pointer;
}

void cpu_free(void* pointer) { std::free(pointer); }

Storage::Storage(std::size_t bytes, Device device) : bytes_(bytes), device_(device) {
  data_ = device.is_cpu() ? cpu_allocate(bytes) : cuda_allocate(bytes, device.index);
}

Storage::~Storage() {
  if (data_ == nullptr) return;
  if (device_.is_cpu()) {
    cpu_free(data_);
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
