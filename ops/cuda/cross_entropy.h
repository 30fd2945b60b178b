#pragma once
// Cross-entropy on CUDA tensors (the public ops in ops/cross_entropy.h route here): logits [N, V] of any
// floating dtype, targets [N] i32/i64 on the same GPU. Targets are validated and the rows that are not
// ignored counted on the GPU (a scan kernel and a 16-byte read-back, one stream synchronisation per
// call); the loss and its gradient never leave the device.
#include "ops/cross_entropy.h"

namespace agf::ops::cuda {

Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options);
Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets,
                              const CrossEntropyOptions& options);

}  // namespace agf::ops::cuda
