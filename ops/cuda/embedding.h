#pragma once
// Embedding on CUDA tensors (the public ops in ops/embedding.h route here). ids live on the same GPU
// and are validated there before they index memory: a scan kernel plus a 16-byte read-back (one stream
// synchronisation per call), failing with the CPU's message for the first id outside [0, V).
#include "core/tensor.h"

namespace agf::ops::cuda {

Tensor embedding_forward(const Tensor& weight, const Tensor& ids);
// A scatter-add with atomicAdd in f32 (f64 for f64): with repeated ids, the f32 sums may differ in the
// last bits between runs (the order of the additions is not fixed). f16/bf16 grads are summed in f32
// and rounded once.
Tensor embedding_backward(const Tensor& grad, const Tensor& ids, int64_t vocabulary_size);

}  // namespace agf::ops::cuda
