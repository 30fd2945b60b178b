// Streams, cuBLAS handles and error reporting for the CUDA backend (see runtime.h).
#include "core/cuda/runtime.h"

#include <array>
#include <mutex>

#include "core/cuda/deferred_check.h"
#include "core/error.h"

namespace agf::cuda {

namespace {
constexpr int kMaxDevices = 16;

struct DeviceResources {
  std::once_flag created;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
};

DeviceResources& resources(int device) {
  AGF_CHECK(device >= 0 && device < kMaxDevices, "cuda:{} is not a valid device index", device);
  static std::array<DeviceResources, kMaxDevices>* all = new std::array<DeviceResources, kMaxDevices>();  // never freed
  DeviceResources& entry = (*all)[device];
  std::call_once(entry.created, [&] {
    DeviceGuard guard(device);
    AGF_CUDA_CHECK(cudaStreamCreateWithFlags(&entry.stream, cudaStreamNonBlocking));
    AGF_CUBLAS_CHECK(cublasCreate(&entry.cublas));
    AGF_CUBLAS_CHECK(cublasSetStream(entry.cublas, entry.stream));
    // f32 GEMMs may use TF32 tensor cores only when asked (CUBLAS_COMPUTE_32F_FAST_TF32 per call);
    // half-precision GEMMs use tensor cores with f32 accumulation (CUBLAS_COMPUTE_32F).
    AGF_CUBLAS_CHECK(cublasSetMathMode(entry.cublas, CUBLAS_DEFAULT_MATH));
  });
  return entry;
}
}  // namespace

void raise_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  const char* name = cudaGetErrorName(status);
  const char* text = cudaGetErrorString(status);
  cudaGetLastError();  // clear a sticky launch error so the next check reports its own call
  fail("CUDA error in {} ({}:{}): {}: {}", call, file, line, name, text);
}

void raise_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  fail("cuBLAS error in {} ({}:{}): {}: {}", call, file, line, cublasGetStatusName(status),
       cublasGetStatusString(status));
}

cudaStream_t current_stream(int device) { return resources(device).stream; }
cublasHandle_t cublas_handle(int device) { return resources(device).cublas; }

void synchronize(int device) {
  DeviceGuard guard(device);
  read_deferred_record(device);  // the verdict of the checks the queued work made (core/cuda/deferred_check.h)
  AGF_CUDA_CHECK(cudaStreamSynchronize(current_stream(device)));
  raise_deferred_errors(device);
}

DeviceGuard::DeviceGuard(int device) {
  AGF_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) AGF_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

}  // namespace agf::cuda
