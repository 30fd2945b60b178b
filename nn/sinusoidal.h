#pragma once
// The sinusoidal position encoding of "Attention Is All You Need" (SPEC §5, the Vanilla baseline and the
// "+PE" hybrid), added to sqrt(d_model)·embedding by the model:
//
//   PE[p, 2i]   = sin(p / 10000^(2i/d_model))
//   PE[p, 2i+1] = cos(p / 10000^(2i/d_model))
#include "core/tensor.h"

namespace agf::nn {

// [positions, d_model] for positions p = 0 .. positions-1 (computed in f64, converted to dtype).
Tensor sinusoidal_positions(int64_t positions, int64_t d_model, DType dtype = DType::f32);

}  // namespace agf::nn
