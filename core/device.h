#pragma once
// Where a tensor's storage lives. Every Tensor carries one; ops refuse to mix devices.
#include <cstdint>
#include <string>
#include <string_view>

namespace agf {

enum class DeviceKind : uint8_t { cpu, cuda };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;

  // cpu(0) is the CPU. cpu(N > 0) is the same host memory under another label: CPU ops run on it, but
  // tensors on cpu:0 and cpu:N do not mix, exactly as a CPU and a GPU tensor do not. Tests move a model
  // there to prove, without a GPU, that every tensor a step creates is made on its operands' device.
  static Device cpu(int index = 0) { return {DeviceKind::cpu, index}; }
  static Device cuda(int index = 0) { return {DeviceKind::cuda, index}; }
  bool is_cpu() const { return kind == DeviceKind::cpu; }
  bool is_cuda() const { return kind == DeviceKind::cuda; }
  bool operator==(const Device&) const = default;
  std::string name() const {
    if (is_cpu()) return index == 0 ? "cpu" : "cpu:" + std::to_string(index);
    return "cuda:" + std::to_string(index);
  }
};

// Parses "cpu", "cuda" (= cuda:0) and "cuda:N"; the error names the text and the accepted forms.
Device parse_device(std::string_view text);

// Waits until all work queued on `device` has finished (a no-op on the CPU, whose ops are synchronous):
// for timing, since GPU ops return as soon as their kernels are queued.
void synchronize(Device device);

// Number of usable CUDA devices: 0 when agf was built without CUDA or when no GPU is present.
int cuda_device_count();
// Why there is no CUDA device (for test skips): "built without CUDA", "no CUDA device: ...", or "".
std::string cuda_unavailable_reason();

}  // namespace agf
