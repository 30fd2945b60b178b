#pragma once
// The dropout keep test, written once for the CPU and the CUDA kernels: element i of a mask drawn at
// (seed, offset) is kept when the uniform of its Philox word (core/philox.h) is at least p, compared in
// f32 (p rounded to float once). Kept values are scaled by 1/(1-p), rounded to the compute type.
#include <cstdint>

#include "core/host_device.h"
#include "core/philox.h"

namespace agf::ops {

AGF_HOST_DEVICE inline float dropout_threshold(double p) { return static_cast<float>(p); }

AGF_HOST_DEVICE inline bool dropout_keeps(uint32_t bits, float threshold) {
  return uniform_from_bits(bits) >= threshold;
}

}  // namespace agf::ops
