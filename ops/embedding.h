#pragma once
// Embedding lookup: ids (i32/i64, any shape) index rows of weight [V, D] -> [..., D].
#include "core/tensor.h"

namespace agf::ops {

Tensor embedding_forward(const Tensor& weight, const Tensor& ids);
// out[p] = W[ids[p]]  =>  dL/dW[v] = Σ_{p: ids[p] = v} g[p]   (a scatter-add; other rows get 0)
Tensor embedding_backward(const Tensor& grad, const Tensor& ids, int64_t vocabulary_size);

}  // namespace agf::ops
