#pragma once
// The optimizer's elementwise work on CUDA tensors (called from train/adam.cpp): Adam's update and the
// two halves of gradient-norm clipping. Contiguous operands of one floating dtype on `device`.
#include <cstdint>

#include "core/element_type.h"
#include "train/adam_update.h"

namespace agf::train::cuda {

// θ, m, v updated in place from g, element by element (train/adam_update.h), in f64.
void adam_update_elements(DType dtype, void* theta, void* m, void* v, const void* grad, int64_t count,
                          const AdamConstants& constants, int device);

// Clipping's norm without a host round trip per tensor: each gradient's Σ g² (in f64) goes to its own
// slot of a device array, through a fixed two-pass reduction (deterministic for given sizes);
// the caller reads all the slots back once. `partials` is device scratch of kSquarePartials doubles for
// this tensor (one row per tensor, so queued tensors never share scratch).
inline constexpr int kSquarePartials = 256;
void sum_of_squares(DType dtype, const void* grad, int64_t count, double* partials, double* slot, int device);

// g ← g·scale in place (the product in f64, rounded once, as on the CPU).
void scale_in_place(DType dtype, void* grad, int64_t count, double scale, int device);

}  // namespace agf::train::cuda
