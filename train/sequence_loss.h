#pragma once
// The training loss of a translation batch (SPEC §6), shared by the trainer and `agf bench train`.
#include "autograd/variable.h"

namespace agf::train {

// Label-smoothed cross-entropy of logits [B, T, V] against targets [B, T] (padding ignored), averaged over
// the non-pad targets. Half-precision logits are cast to f32 first (as PyTorch's autocast does): the
// softmax, the loss and its gradient — the seed of the scaled backward pass — are f32; the cast's backward
// hands the logits an f16/bf16 gradient.
Variable sequence_loss(const Variable& logits, const Tensor& targets, double label_smoothing);

}  // namespace agf::train
