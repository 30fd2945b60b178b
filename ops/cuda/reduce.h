#pragma once
// Sum, mean and max on a GPU. ops/cpu/reduce.cpp plans every reduction on either device (reduced axes
// moved last and made contiguous, so that each output element reduces one contiguous row) and hands the
// rows of a CUDA tensor to reduce_rows; sum_to and the backwards are compositions of routed ops.
#include "core/tensor.h"
#include "ops/reduce_kind.h"

namespace agf::ops::cuda {

// out[r] = the `kind` reduction of in[r·length : (r+1)·length] for r < rows; `in` and `out` are
// contiguous CUDA tensors of one floating dtype (`op` names the caller in errors).
void reduce_rows(const char* op, ReduceKind kind, const Tensor& in, const Tensor& out, int64_t rows, int64_t length);

}  // namespace agf::ops::cuda
