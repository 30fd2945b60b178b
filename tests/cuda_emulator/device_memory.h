#pragma once
// Emulated device memory: host pages that only emulated device work may touch.
//
// Every cudaMalloc is its own mapping, laid out so that the allocation ends where a PROT_NONE guard
// page begins: a kernel (or copy) running past the end faults. Outside device work (a kernel, a copy,
// a memset, a GEMM) every allocation is PROT_NONE too, so host code that dereferences a device pointer
// — which works by accident when device memory is host memory, and crashes on a GPU — faults here as
// well; and during a kernel on cuda:N only cuda:N's allocations can be opened. Opening is lazy: the fault
// of device work's first touch of an allocation opens it, and the end of the work closes what was opened.
// Any other fault inside emulated device memory is reported on stderr naming the allocation and which
// misuse it was.
#include <cstddef>
#include <string>

namespace agf::emulator {

// A new allocation of `bytes` on `device`, filled with 0xff bytes (NaN as floats: reading memory that
// was never written shows). nullptr when the emulated device's capacity or the host's memory is spent.
void* allocate_device_memory(std::size_t bytes, int device);
// Unmaps an allocation (later use faults). False if `pointer` is not the start of one.
bool free_device_memory(void* pointer);

// Whether [pointer, pointer + bytes) lies inside one allocation (of `device`, or of any device when
// device < 0). Names the problem in `why` when not.
bool is_device_range(const void* pointer, std::size_t bytes, int device, std::string& why);

// While alive, the allocations of `device` (every device when device < 0) are readable and writable.
class DeviceAccess {
 public:
  explicit DeviceAccess(int device);
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

}  // namespace agf::emulator
