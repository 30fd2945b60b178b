#pragma once
// Dropout on CUDA tensors (the public ops in ops/dropout.h route here): the CPU's mask, bit for bit.
#include <cstdint>

#include "core/tensor.h"

namespace agf::ops::cuda {

Tensor dropout_forward(const Tensor& x, double p, uint64_t seed, uint64_t offset);
Tensor dropout_backward(const Tensor& grad, double p, uint64_t seed, uint64_t offset);

}  // namespace agf::ops::cuda
