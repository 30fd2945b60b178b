// The part of the CUDA runtime API that agf calls, emulated on the host (docs/cuda-emulator.md).
//
// Work runs synchronously at the call, so streams only remember their device. Every call checks what a
// GPU would reject — a launch configuration over the limits, dynamic shared memory beyond what the
// kernel was allowed, a stream of another device, a copy whose pointers are not device memory of the
// right size — and reports it the CUDA way: an error code, and for launches a sticky error returned by
// the next cudaGetLastError(), whose cudaGetErrorString() says exactly what was wrong.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "tests/cuda_emulator/device_memory.h"
#include "tests/cuda_emulator/launch.h"
#include "tests/cuda_emulator/statistics.h"

struct CUstream_st {
  int device;
};

namespace agf::emulator {
namespace {

// An H200 (sm_90): the limits a launch is checked against.
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlockX = 1024, kMaxBlockY = 1024, kMaxBlockZ = 64;
constexpr unsigned kMaxGridX = 2147483647u, kMaxGridYZ = 65535;
constexpr int kDefaultDynamicShared = 48 << 10;
constexpr int kMaxSharedOptIn = 227 << 10;
constexpr int kMultiprocessors = 132;

std::recursive_mutex g_mutex;                     // one emulated device operation at a time
thread_local int g_current_device = 0;            // per host thread, as in CUDA
thread_local cudaError_t g_sticky = cudaSuccess;  // what cudaGetLastError() returns next
cudaError_t g_described = cudaSuccess;            // the error g_description explains
std::string g_description;
std::map<const void*, int> g_dynamic_shared_limit;  // cudaFuncAttributeMaxDynamicSharedMemorySize per kernel

// Updated under g_mutex. The first update registers the report at exit when AGF_EMULATOR_STATS is set.
Statistics& counters() {
  static Statistics counts;
  static const bool report = [] {
    if (std::getenv("AGF_EMULATOR_STATS") != nullptr) {
      std::atexit([] {
        const Statistics s = statistics();
        std::fprintf(stderr,
                     "agf CUDA emulator: %lld kernel launches (%lld CUDA threads), %lld cuBLAS GEMMs, %lld host "
                     "waits for the device, %lld bytes to the host, %lld bytes to the device\n",
                     static_cast<long long>(s.launches), static_cast<long long>(s.threads),
                     static_cast<long long>(s.gemms), static_cast<long long>(s.host_waits),
                     static_cast<long long>(s.bytes_to_host), static_cast<long long>(s.bytes_to_device));
      });
    }
    return true;
  }();
  (void)report;
  return counts;
}

void count_host_wait() {
  std::lock_guard lock(g_mutex);
  ++counters().host_waits;
}

int device_count() {
  // AGF_EMULATOR_DEVICES: how many devices to emulate (2 by default, so multi-device paths run too).
  static const int count = [] {
    const char* text = std::getenv("AGF_EMULATOR_DEVICES");
    return text != nullptr ? std::atoi(text) : 2;
  }();
  return count;
}

cudaError_t fail(cudaError_t error, std::string description, bool sticky = false) {
  g_described = error;
  g_description = std::move(description);
  if (sticky) g_sticky = error;
  return error;
}

std::string shape_text(const LaunchShape& s) {
  return fmt::format("grid ({},{},{}) block ({},{},{}) with {} bytes of dynamic shared memory", s.grid.x, s.grid.y,
                     s.grid.z, s.block.x, s.block.y, s.block.z, s.dynamic_shared_bytes);
}

// Why a GPU would refuse this launch, or "".
std::string launch_problem(const void* kernel, const LaunchShape& s, cudaStream_t stream) {
  const dim3 b = s.block, g = s.grid;
  if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0) return "a zero dimension";
  if (b.x > kMaxBlockX || b.y > kMaxBlockY || b.z > kMaxBlockZ || std::size_t{b.x} * b.y * b.z > kMaxThreadsPerBlock)
    return fmt::format("more than {} threads per block, or a block dimension over ({},{},{})", kMaxThreadsPerBlock,
                       kMaxBlockX, kMaxBlockY, kMaxBlockZ);
  if (g.x > kMaxGridX || g.y > kMaxGridYZ || g.z > kMaxGridYZ)
    return fmt::format("a grid dimension over ({},{},{})", kMaxGridX, kMaxGridYZ, kMaxGridYZ);
  const auto limit = g_dynamic_shared_limit.find(kernel);
  const int allowed = limit == g_dynamic_shared_limit.end() ? kDefaultDynamicShared : limit->second;
  if (s.dynamic_shared_bytes > static_cast<std::size_t>(allowed))
    return fmt::format("{} bytes of dynamic shared memory where the kernel may use {} (raise it with "
                       "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize))",
                       s.dynamic_shared_bytes, allowed);
  if (stream != nullptr && stream->device != g_current_device)
    return fmt::format("a stream of cuda:{} while cuda:{} is current", stream->device, g_current_device);
  return "";
}

// Checks [pointer, pointer + bytes) for a copy: device memory (of `device`, or any when < 0) or not.
bool check_range(const char* call, const char* role, const void* pointer, std::size_t bytes, bool device_side,
                 int device) {
  if (bytes == 0) return true;
  std::string why;
  const bool on_device = is_device_range(pointer, bytes, device, why);
  if (on_device == device_side) return true;
  fail(cudaErrorInvalidValue,
       device_side ? fmt::format("{}: {} {}", call, role, why)
                   : fmt::format("{}: {} {} is device memory, but the copy kind says host", call, role, pointer));
  return false;
}

bool is_device_pointer(const void* pointer) {
  std::string ignored;
  return is_device_range(pointer, 1, -1, ignored);
}

const char* error_name(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    default: return "cudaErrorUnknown";
  }
}

}  // namespace

void launch_kernel(const void* kernel, const LaunchShape& shape, cudaStream_t stream,
                   const std::function<void()>& thread_body) {
  std::lock_guard lock(g_mutex);
  if (const std::string problem = launch_problem(kernel, shape, stream); !problem.empty()) {
    fail(cudaErrorInvalidConfiguration, fmt::format("launch with {}: {}", shape_text(shape), problem), true);
    return;
  }
  ++counters().launches;
  counters().threads += int64_t{shape.grid.x} * shape.grid.y * shape.grid.z * shape.block.x * shape.block.y *
                        shape.block.z;
  DeviceAccess access(g_current_device);
  if (const std::string failure = run_grid(shape, thread_body); !failure.empty())
    fail(cudaErrorLaunchFailure, fmt::format("kernel launched with {} failed: {}", shape_text(shape), failure), true);
}

Statistics statistics() {
  std::lock_guard lock(g_mutex);
  return counters();
}

void count_gemm() {
  std::lock_guard lock(g_mutex);
  ++counters().gemms;
}

}  // namespace agf::emulator

using namespace agf::emulator;

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = device_count();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= device_count())
    return fail(cudaErrorInvalidDevice,
                fmt::format("cudaSetDevice({}): the emulator has {} devices", device, device_count()));
  g_current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = g_current_device;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  count_host_wait();
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attribute, int device) {
  if (device < 0 || device >= device_count())
    return fail(cudaErrorInvalidDevice, "cudaDeviceGetAttribute: no such device");
  switch (attribute) {
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = kMaxSharedOptIn; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = kDefaultDynamicShared; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock: *value = static_cast<int>(kMaxThreadsPerBlock); return cudaSuccess;
    case cudaDevAttrWarpSize: *value = 32; return cudaSuccess;
    case cudaDevAttrMultiProcessorCount: *value = kMultiprocessors; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
    default:
      return fail(cudaErrorInvalidValue,
                  fmt::format("cudaDeviceGetAttribute: attribute {} is not emulated", static_cast<int>(attribute)));
  }
}

cudaError_t cudaFuncSetAttribute(const void* kernel, enum cudaFuncAttribute attribute, int value) {
  std::lock_guard lock(g_mutex);
  if (attribute == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || value > kMaxSharedOptIn)
      return fail(cudaErrorInvalidValue, fmt::format("cudaFuncSetAttribute: {} bytes of dynamic shared memory "
                                                     "(an H200 allows at most {})",
                                                     value, kMaxSharedOptIn));
    g_dynamic_shared_limit[kernel] = value;
  }
  return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
  const cudaError_t error = g_sticky;
  g_sticky = cudaSuccess;
  return error;
}

const char* cudaGetErrorName(cudaError_t error) { return error_name(error); }

const char* cudaGetErrorString(cudaError_t error) {
  if (error == cudaSuccess) return "no error";
  return error == g_described ? g_description.c_str() : "(emulator: no description recorded)";
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  *stream = new CUstream_st{g_current_device};  // never destroyed, like agf's streams
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) {
  count_host_wait();
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** pointer, size_t bytes) {
  *pointer = allocate_device_memory(bytes, g_current_device);
  if (*pointer == nullptr)
    return fail(cudaErrorMemoryAllocation, fmt::format("cudaMalloc of {} bytes: the emulated device is out of memory "
                                                       "(AGF_EMULATOR_MEMORY_MB sets its size)",
                                                       bytes));
  return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr || free_device_memory(pointer)) return cudaSuccess;
  return fail(cudaErrorInvalidValue, fmt::format("cudaFree({}): not the start of a device allocation", pointer));
}

cudaError_t cudaMemcpyAsync(void* destination, const void* source, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t) {
  std::lock_guard lock(g_mutex);
  const char* call = "cudaMemcpyAsync";
  bool destination_on_device = is_device_pointer(destination), source_on_device = is_device_pointer(source);
  switch (kind) {
    case cudaMemcpyHostToDevice: destination_on_device = true, source_on_device = false; break;
    case cudaMemcpyDeviceToHost: destination_on_device = false, source_on_device = true; break;
    case cudaMemcpyDeviceToDevice: destination_on_device = source_on_device = true; break;
    case cudaMemcpyHostToHost: destination_on_device = source_on_device = false; break;
    default: break;  // cudaMemcpyDefault: the pointers say
  }
  if (!check_range(call, "destination", destination, bytes, destination_on_device, -1) ||
      !check_range(call, "source", source, bytes, source_on_device, -1))
    return g_described;
  if (source_on_device && !destination_on_device) counters().bytes_to_host += static_cast<int64_t>(bytes);
  if (destination_on_device && !source_on_device) counters().bytes_to_device += static_cast<int64_t>(bytes);
  DeviceAccess access(-1);
  std::memmove(destination, source, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* destination, int value, size_t bytes, cudaStream_t) {
  std::lock_guard lock(g_mutex);
  if (!check_range("cudaMemsetAsync", "destination", destination, bytes, true, -1)) return g_described;
  DeviceAccess access(-1);
  std::memset(destination, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void* destination, int destination_device, const void* source, int source_device,
                                size_t bytes, cudaStream_t) {
  std::lock_guard lock(g_mutex);
  if (!check_range("cudaMemcpyPeerAsync", "destination", destination, bytes, true, destination_device) ||
      !check_range("cudaMemcpyPeerAsync", "source", source, bytes, true, source_device))
    return g_described;
  DeviceAccess access(-1);
  std::memmove(destination, source, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyPeer(void* destination, int destination_device, const void* source, int source_device,
                           size_t bytes) {
  return cudaMemcpyPeerAsync(destination, destination_device, source, source_device, bytes, nullptr);
}

}  // extern "C"
