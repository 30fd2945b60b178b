#pragma once
// Inverted dropout with a mask drawn from the Philox stream (seed, offset): element i (row-major) is kept
// when uniform(bits(seed, offset, i)) >= p, and kept values are scaled by 1/(1-p). The mask is never
// stored: backward regenerates it from the same (seed, offset).
#include <cstdint>

#include "core/tensor.h"

namespace agf::ops {

Tensor dropout_forward(const Tensor& x, double p, uint64_t seed, uint64_t offset);
// y = x·m/(1-p)  =>  dL/dx = g·m/(1-p)
Tensor dropout_backward(const Tensor& grad, double p, uint64_t seed, uint64_t offset);

}  // namespace agf::ops
