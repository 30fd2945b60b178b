#include "train/device_flag.h"

#include <charconv>

#include "core/error.h"

namespace agf::train {

Device parse_device(std::string_view name) {
  if (name == "cpu") return Device::cpu();
  if (name == "cuda") return Device::cuda(0);
  if (name.starts_with("cuda:")) {
    const std::string_view digits = name.substr(5);
    int index = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc() && end == digits.data() + digits.size() && !digits.empty() && index >= 0) {
      return Device::cuda(index);
    }
  }
  fail("--device: expected cpu, cuda or cuda:N, got '{}'", name);
}

void check_device_usable(Device device) {
  if (device.is_cpu()) return;
  const int count = cuda_device_count();
  AGF_CHECK(count > 0, "--device {}: {}", device.name(), cuda_unavailable_reason());
  AGF_CHECK(device.index < count, "--device {}: this machine has {} CUDA device{} (cuda:0{})", device.name(), count,
            count == 1 ? "" : "s", count == 1 ? "" : fmt::format(" to cuda:{}", count - 1));
}

}  // namespace agf::train
