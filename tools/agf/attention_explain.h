#pragma once
// `agf gradcheck --op attention --pos agf-m --pcmv --explain`: one head, four tokens, every intermediate of
// the forward and backward pass printed under the names of docs/agf-backprop.md.
#include "ops/attention.h"

namespace agf::cli {

// Prints the walk-through; returns 0 when the step-by-step gradients, the op's backward and finite
// differences agree, 1 otherwise.
int explain_attention(ops::PositionalScheme scheme, bool pcmv, bool causal);

}  // namespace agf::cli
