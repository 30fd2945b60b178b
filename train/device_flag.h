#pragma once
// The --device flag of `agf train`, `agf eval` and `agf translate`: where the model, the batches and
// everything a step creates live. Whatever is read on the host (losses, log-probabilities, argmax) is
// moved back explicitly with .to(Device::cpu()).
#include <string_view>

#include "core/device.h"

namespace agf::train {

// "cpu", "cuda" (= cuda:0) or "cuda:N"; anything else is an error naming the flag.
Device parse_device(std::string_view name);

// Fails, naming --device, when `device` cannot be used here: a build without CUDA or a machine without a
// GPU (the reason from cuda_unavailable_reason()), or an index past the last GPU.
void check_device_usable(Device device);

// parse_device then check_device_usable: the --device value of a command, ready to use.
Device usable_device(std::string_view name);

}  // namespace agf::train
