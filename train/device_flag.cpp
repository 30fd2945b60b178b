#include "train/device_flag.h"

#include "core/error.h"

namespace agf::train {

Device parse_device(std::string_view name) {
  try {
    return agf::parse_device(name);
  } catch (const Error& error) {
    fail("--device: {}", error.what());
  }
}

void check_device_usable(Device device) {
  if (device.is_cpu()) return;
  const int count = cuda_device_count();
  AGF_CHECK(count > 0, "--device {}: {}", device.name(), cuda_unavailable_reason());
  AGF_CHECK(device.index < count, "--device {}: this machine has {} CUDA device{} (cuda:0{})", device.name(), count,
            count == 1 ? "" : "s", count == 1 ? "" : fmt::format(" to cuda:{}", count - 1));
}

Device usable_device(std::string_view name) {
  const Device device = parse_device(name);
  check_device_usable(device);
  return device;
}

}  // namespace agf::train
