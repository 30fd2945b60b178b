#pragma once
// Multi-head attention around the attention op (ops/attention.h): projections with biases, the heads
// split and merged as views, and the positional scheme as a child module. Parameter names (SPEC §7):
//
//   q_proj.{weight,bias}  k_proj.{...}  v_proj.{...}  out_proj.{...}  pos.{G,rho,k,lc2,lc3,bias,r1,r2}
//
// The kind decides the mask and the positional term: `bidirectional` (encoder self-attention),
// `causal` (decoder self-attention: only keys at or before the query, so only δ = 0 occurs) and `cross`
// (decoder-to-encoder: never a positional term, SPEC §2 — its `pos` is always `none`).
#include <memory>

#include "core/random.h"
#include "nn/linear.h"
#include "nn/positional/positional_encoding.h"

namespace agf::nn {

enum class AttentionKind { bidirectional, causal, cross };

class MultiHeadAttention : public Module {
 public:
  // d_model = heads · head size. `positional.heads/head_dim` are filled in here. For t5, a stack passes its
  // shared table (`encoder.t5_bias.weight`) as `shared_t5_table`; without one the layer owns `pos.bias`.
  // `attention_dropout` is applied to the attention weights a in training mode.
  MultiHeadAttention(int64_t d_model, int64_t heads, const PositionalConfig& positional, AttentionKind kind,
                     Generator& generator, DType dtype = DType::f32, double attention_dropout = 0.0,
                     const Variable& shared_t5_table = {});

  // query_input [B, Tq, d_model], key_value_input [B, Tk, d_model] (the same variable for self-attention),
  // key_lengths [B] i32/i64: keys n >= key_lengths[b] are padding (undefined: none). -> [B, Tq, d_model].
  // In training mode with attention_dropout > 0, `dropout_generator` supplies the Philox (seed, offset)
  // of the weight mask and advances by B·H·Tq·Tk; it is required then.
  Variable forward(const Variable& query_input, const Variable& key_value_input, const Tensor& key_lengths,
                   Generator* dropout_generator = nullptr) const;

  const PositionalEncoding& positional() const { return *positional_; }
  AttentionKind kind() const { return kind_; }
  int64_t heads() const { return heads_; }
  int64_t head_dim() const { return head_dim_; }

 private:
  int64_t d_model_, heads_, head_dim_;
  AttentionKind kind_;
  double attention_dropout_;
  std::shared_ptr<Linear> q_proj_, k_proj_, v_proj_, out_proj_;
  std::shared_ptr<PositionalEncoding> positional_;
};

}  // namespace agf::nn
