#pragma once
// The RoPE rotation kernel's launcher (ops/cuda/rope_kernels.cu). Plain C++.
#include <cstdint>

#include "core/element_type.h"

namespace agf::cuda {

// in, out: contiguous [rows, head_size] with rows = B·H·T and position t = row mod length. For every
// pair i < head_size/2:  out[2i] = x[2i]·c - x[2i+1]·s,  out[2i+1] = x[2i]·s + x[2i+1]·c,
// with c = cos θ(t, i), s = sign·sin θ(t, i).
void launch_rope(DType dtype, const void* in, void* out, int64_t rows, int64_t length, int64_t head_size, double sign,
                 int device);

}  // namespace agf::cuda
