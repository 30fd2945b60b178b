#include "nn/multi_head_attention.h"

#include "autograd/functions.h"

namespace agf::nn {

namespace {
PositionalConfig with_shape(PositionalConfig config, AttentionKind kind, int64_t heads, int64_t head_dim) {
  if (kind == AttentionKind::cross) config = PositionalConfig{};  // cross-attention: no positional term
  config.heads = heads;
  config.head_dim = head_dim;
  return config;
}
}  // namespace

MultiHeadAttention::MultiHeadAttention(int64_t d_model, int64_t heads, const PositionalConfig& positional,
                                       AttentionKind kind, Generator& generator, DType dtype, double attention_dropout,
                                       const Variable& shared_t5_table)
    : d_model_(d_model),
      heads_(heads),
      head_dim_(heads > 0 ? d_model / heads : 0),
      kind_(kind),
      attention_dropout_(attention_dropout) {
  AGF_CHECK(heads >= 1 && d_model % heads == 0, "MultiHeadAttention: d_model {} is not a multiple of {} heads", d_model,
            heads);
  AGF_CHECK(attention_dropout >= 0 && attention_dropout < 1, "MultiHeadAttention: dropout {} is outside [0, 1)",
            attention_dropout);
  q_proj_ = register_module("q_proj", std::make_shared<Linear>(d_model, d_model, generator, dtype));
  k_proj_ = register_module("k_proj", std::make_shared<Linear>(d_model, d_model, generator, dtype));
  v_proj_ = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, generator, dtype));
  out_proj_ = register_module("out_proj", std::make_shared<Linear>(d_model, d_model, generator, dtype));
  positional_ = register_module("pos", make_positional_encoding(with_shape(positional, kind, heads, head_dim_), dtype,
                                                                shared_t5_table));
}

Variable MultiHeadAttention::forward(const Variable& query_input, const Variable& key_value_input,
                                     const Tensor& key_lengths, Generator* dropout_generator) const {
  AGF_CHECK(query_input.dim() == 3 && key_value_input.dim() == 3 && query_input.size(0) == key_value_input.size(0),
            "MultiHeadAttention: inputs must be [B, T, {}], got {} and {}", d_model_, query_input.data().description(),
            key_value_input.data().description());
  const int64_t B = query_input.size(0), Tq = query_input.size(1), Tk = key_value_input.size(1);
  AGF_CHECK(kind_ == AttentionKind::cross || Tq == Tk,
            "MultiHeadAttention: self-attention needs as many queries as keys, got {} and {}", Tq, Tk);
  // [B, T, d_model] -> [B, H, T, dk], a view (the op reads the strided heads in place)
  auto split_heads = [&](const Variable& x, int64_t T) {
    return permute(reshape(x, {B, T, heads_, head_dim_}), {0, 2, 1, 3});
  };
  const Variable q = split_heads(q_proj_->forward(query_input), Tq);
  const Variable k = split_heads(k_proj_->forward(key_value_input), Tk);
  const Variable v = split_heads(v_proj_->forward(key_value_input), Tk);

  ops::AttentionOptions options;
  positional_->configure(options);
  options.causal = kind_ == AttentionKind::causal;
  if (training() && attention_dropout_ > 0) {
    AGF_CHECK(dropout_generator != nullptr, "MultiHeadAttention: attention dropout in training mode needs a generator");
    options.dropout = attention_dropout_;
    options.dropout_seed = dropout_generator->seed();
    options.dropout_offset = dropout_generator->advance(B * heads_ * Tq * Tk);
  }
  const Variable o = attention(q, k, v, key_lengths, positional_->variables(), options);  // [B, H, Tq, dk]
  // Merge the heads: the op lays o out as [B, Tq, H, dk], so this permute + reshape copies nothing.
  return out_proj_->forward(reshape(permute(o, {0, 2, 1, 3}), {B, Tq, d_model_}));
}

}  // namespace agf::nn
