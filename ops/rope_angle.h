#pragma once
// The RoPE angle θ(p, i) = p · 10000^(-2i/dk) of feature pair i at position p (ops/rope.h), in double:
// written once for the CPU loop and the CUDA kernel (nvcc compiles std::pow on double in device code).
#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace agf::ops {

AGF_HOST_DEVICE inline double rope_angle(int64_t position, int64_t pair, int64_t head_size) {
  return static_cast<double>(position) *
         std::pow(10000.0, -2.0 * static_cast<double>(pair) / static_cast<double>(head_size));
}

}  // namespace agf::ops
