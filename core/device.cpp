#include "core/device.h"

#include <charconv>

#include "core/error.h"
#ifdef AGF_WITH_CUDA
#include "core/cuda/runtime.h"
#endif

namespace agf {

Device parse_device(std::string_view text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  if (text.starts_with("cuda:")) {
    const std::string_view digits = text.substr(5);
    int index = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc() && end == digits.data() + digits.size() && !digits.empty() && index >= 0) {
      return Device::cuda(index);
    }
  }
  fail("'{}' is not a device: use cpu, cuda or cuda:N", text);
}

void synchronize(Device device) {
#ifdef AGF_WITH_CUDA
  if (device.is_cuda()) cuda::synchronize(device.index);
#endif
  (void)device;
}

}  // namespace agf
