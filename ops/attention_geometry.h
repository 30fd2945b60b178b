#pragma once
// The sizes of one attention call, and the argument checks every device shares (with the same messages),
// so the CPU op (ops/cpu/attention.cpp) and the CUDA op (ops/cuda/attention.cpp) agree on what they accept.
#include <cstdint>

#include "core/tensor.h"
#include "ops/attention.h"
#include "ops/attention_positional.h"

namespace agf::ops {

struct AttentionGeometry {
  int64_t batch = 0, heads = 0, queries = 0, keys = 0, head_dim = 0;
  int64_t distances = 1;  // D = 0 .. distances-1: max(Tq, Tk, 1)
  int64_t width = 1;      // entries per (δ, h, D) in the positional table: dk for agf-f, else 1
  PositionalTableShape table_shape() const { return {heads, head_dim, distances}; }
};

// q [B, H, Tq, dk], k and v [B, H, Tk, dk], all defined, floating, of one dtype and on one device.
AttentionGeometry attention_geometry(const Tensor& q, const Tensor& k, const Tensor& v, PositionalScheme scheme);

// The options every device accepts: dropout in [0, 1).
void check_attention_options(const AttentionOptions& options);

// The backward's incoming gradient: defined, [B, H, Tq, dk] of the call, on q's device and of its dtype.
void check_attention_gradient(const Tensor& grad, const Tensor& q, const AttentionGeometry& g);

}  // namespace agf::ops
