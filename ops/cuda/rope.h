#pragma once
// RoPE on a GPU: ops/cpu/rope.cpp checks the input on either device and hands a CUDA tensor here.
#include "core/tensor.h"

namespace agf::ops::cuda {

// x: a contiguous CUDA tensor [B, H, T, dk] (dk even) -> each feature pair (2i, 2i+1) at position t rotated
// by sign·θ(t, i) (ops/rope.h); `op` names the caller in errors.
Tensor rope_rotate(const char* op, const Tensor& x, double sign);

}  // namespace agf::ops::cuda
