#pragma once
// Rotary position embedding (RoPE, Su et al. 2021) on one side of attention (q or k) [B, H, T, dk], with
// the position p = t (the index along axis 2, from 0). Each feature pair (2i, 2i+1) is rotated by the angle
// θ(p, i) = p · 10000^(-2i/dk):
//
//   y[2i]   = x[2i]·cos θ - x[2i+1]·sin θ
//   y[2i+1] = x[2i]·sin θ + x[2i+1]·cos θ
//
// A rotation is orthogonal, so its backward is the rotation by -θ (the transpose).
#include "core/tensor.h"

namespace agf::ops {

// x [B, H, T, dk] with dk even -> a contiguous [B, H, T, dk].
Tensor rope_forward(const Tensor& x);
// y = R(θ)·x  =>  dL/dx = R(θ)ᵀ·g = R(-θ)·g
Tensor rope_backward(const Tensor& grad);

}  // namespace agf::ops
