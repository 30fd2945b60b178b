#pragma once
// The attention op (ops/attention.h) on Variables: one graph node whose backward is the op's hand-written
// attention_backward, giving the gradients of q, k, v and of every positional parameter at once.
#include "autograd/variable.h"
#include "ops/attention.h"

namespace agf {

// The learnable positional parameters as Variables (ops::kPositionalParameterTable); those the scheme lacks
// stay undefined.
using PositionalVariables = ops::PositionalSet<Variable>;

// q [B, H, Tq, dk], k and v [B, H, Tk, dk] -> o [B, H, Tq, dk]; key_lengths [B] (undefined: no padding).
Variable attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& key_lengths,
                   const PositionalVariables& positional, const ops::AttentionOptions& options);

}  // namespace agf
