#pragma once
// The CUDA runtime as agf uses it: one stream and one cuBLAS handle per device, and error checks that
// name the failing call. Plain C++ (no fmt), so both .cpp files and nvcc-compiled .cu files include it.
//
// Every agf kernel and cuBLAS call on a device is issued on that device's stream (current_stream), so
// work is ordered without explicit synchronisation, and a block the caching allocator hands out again
// is only reused by work queued after its last use. The host waits only when it reads values back.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace agf::cuda {

// Throws agf::Error: "<call> failed at file:line: <error name>: <error string>" (+ context, if any).
[[noreturn]] void raise_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void raise_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) raise_cuda_error(status, call, file, line);
}
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) raise_cublas_error(status, call, file, line);
}

// The stream of `device` (created on first use, never destroyed). All agf work on a device goes here.
cudaStream_t current_stream(int device);
// The cuBLAS handle of `device`, bound to current_stream(device), with tensor-core math allowed.
cublasHandle_t cublas_handle(int device);
// Waits until every queued operation on `device` has finished (tests and timing; reads sync anyway), then
// raises the first failure of the deferred checks that work made (core/cuda/deferred_check.h).
void synchronize(int device);

// Makes `device` current for the lifetime of the guard (kernels launch on the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace agf::cuda

// AGF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream)): throws naming the call as written,
// with its arguments, when it does not return cudaSuccess.
#define AGF_CUDA_CHECK(call) ::agf::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define AGF_CUBLAS_CHECK(call) ::agf::cuda::check_cublas((call), #call, __FILE__, __LINE__)
// After a kernel launch: a bad configuration (grid too large, too much shared memory) surfaces here, named.
#define AGF_CUDA_CHECK_LAUNCH(kernel) \
  ::agf::cuda::check_cuda(cudaGetLastError(), "launch of " #kernel, __FILE__, __LINE__)
