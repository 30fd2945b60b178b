#pragma once
// Tensor's methods for CUDA tensors (called by core/tensor.cpp when a tensor lives on a GPU).
#include "core/tensor.h"

namespace agf::cuda {

// A copy of `source` on `device` (host ↔ device, or between devices), contiguous.
Tensor transfer(const Tensor& source, Device device);
// out = source (broadcast to out's shape, converted to out's dtype), both on the same CUDA device.
void copy_into(const Tensor& out, const Tensor& source);
void fill(const Tensor& out, double value);

}  // namespace agf::cuda
