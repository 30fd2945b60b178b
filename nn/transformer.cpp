#include "nn/transformer.h"

#include <cmath>

#include "autograd/functions.h"
#include "nn/sinusoidal.h"

namespace agf::nn {

namespace {

PositionalConfig self_attention_positional(const TransformerConfig& config) {
  PositionalConfig positional;
  // The Vanilla Transformer's position is in the embeddings; its attention has no positional term.
  positional.scheme = config.pos == "sinusoidal" ? "none" : config.pos;
  positional.pcmv = config.pcmv;
  positional.max_distance = config.max_distance;
  positional.k = config.k;
  positional.learnable_k = config.learnable_k;
  return positional;
}

// x + dropout(sublayer(x)) around a norm: post-norm  norm(x + dropout(f(x)));
//                                         pre-norm   x + dropout(f(norm(x))).
template <class Sublayer>
Variable residual(const Variable& x, const LayerNorm& norm, bool pre_norm, double p, DropoutStream& dropout,
                  bool training, Sublayer sublayer) {
  if (pre_norm) return x + dropout.apply(sublayer(norm.forward(x)), p, training);
  return norm.forward(x + dropout.apply(sublayer(x), p, training));
}

}  // namespace

// ---- feed-forward ---------------------------------------------------------------------------------------

FeedForward::FeedForward(int64_t d_model, int64_t hidden, Generator& generator, DType dtype) {
  fc1_ = register_module("fc1", std::make_shared<Linear>(d_model, hidden, generator, dtype));
  fc2_ = register_module("fc2", std::make_shared<Linear>(hidden, d_model, generator, dtype));
}

Variable FeedForward::forward(const Variable& x) const { return fc2_->forward(relu(fc1_->forward(x))); }

// ---- layers ----------------------------------------------------------------------------------------------

EncoderLayer::EncoderLayer(const TransformerConfig& config, Generator& generator, DType dtype,
                           const Variable& shared_t5_table)
    : config_(config) {
  self_attn_ = register_module(
      "self_attn", std::make_shared<MultiHeadAttention>(config.d_model, config.heads, self_attention_positional(config),
                                                        AttentionKind::bidirectional, generator, dtype, config.dropout,
                                                        shared_t5_table));
  ffn_ = register_module("ffn", std::make_shared<FeedForward>(config.d_model, config.ffn, generator, dtype));
  norm1_ = register_module("norm1", std::make_shared<LayerNorm>(config.d_model, 1e-5, dtype));
  norm2_ = register_module("norm2", std::make_shared<LayerNorm>(config.d_model, 1e-5, dtype));
}

Variable EncoderLayer::forward(const Variable& x, const Tensor& source_lengths, DropoutStream& dropout) {
  Generator* attention_dropout = training() ? &dropout.generator() : nullptr;
  const Variable attended = residual(x, *norm1_, config_.pre_norm, config_.dropout, dropout, training(),
                                     [&](const Variable& h) {
                                       return self_attn_->forward(h, h, source_lengths, attention_dropout);
                                     });
  return residual(attended, *norm2_, config_.pre_norm, config_.dropout, dropout, training(),
                  [&](const Variable& h) { return ffn_->forward(h); });
}

DecoderLayer::DecoderLayer(const TransformerConfig& config, Generator& generator, DType dtype,
                           const Variable& shared_t5_table)
    : config_(config) {
  self_attn_ = register_module(
      "self_attn",
      std::make_shared<MultiHeadAttention>(config.d_model, config.heads, self_attention_positional(config),
                                           AttentionKind::causal, generator, dtype, config.dropout, shared_t5_table));
  PositionalConfig no_position;  // cross-attention never carries a positional term (SPEC §2)
  cross_attn_ = register_module("cross_attn", std::make_shared<MultiHeadAttention>(config.d_model, config.heads,
                                                                                   no_position, AttentionKind::cross,
                                                                                   generator, dtype, config.dropout));
  ffn_ = register_module("ffn", std::make_shared<FeedForward>(config.d_model, config.ffn, generator, dtype));
  norm1_ = register_module("norm1", std::make_shared<LayerNorm>(config.d_model, 1e-5, dtype));
  norm2_ = register_module("norm2", std::make_shared<LayerNorm>(config.d_model, 1e-5, dtype));
  norm3_ = register_module("norm3", std::make_shared<LayerNorm>(config.d_model, 1e-5, dtype));
}

Variable DecoderLayer::forward(const Variable& y, const Variable& memory, const Tensor& source_lengths,
                               DropoutStream& dropout) {
  Generator* attention_dropout = training() ? &dropout.generator() : nullptr;
  const bool pre = config_.pre_norm;
  const double p = config_.dropout;
  // Causal self-attention needs no padding mask: padded target positions come after every real one.
  const Variable attended = residual(y, *norm1_, pre, p, dropout, training(), [&](const Variable& h) {
    return self_attn_->forward(h, h, Tensor(), attention_dropout);
  });
  const Variable crossed = residual(attended, *norm2_, pre, p, dropout, training(), [&](const Variable& h) {
    return cross_attn_->forward(h, memory, source_lengths, attention_dropout);
  });
  return residual(crossed, *norm3_, pre, p, dropout, training(), [&](const Variable& h) { return ffn_->forward(h); });
}

// ---- stacks ----------------------------------------------------------------------------------------------

template <class Layer>
Stack<Layer>::Stack(const TransformerConfig& config, int64_t count, Generator& generator, DType dtype) {
  Variable shared_t5_table;
  if (config.pos == "t5") {
    t5_bias = register_module("t5_bias", std::make_shared<T5BiasTable>(config.heads, dtype));
    shared_t5_table = t5_bias->weight();
  }
  for (int64_t l = 0; l < count; ++l) {
    layers.push_back(register_module("layers." + std::to_string(l),
                                     std::make_shared<Layer>(config, generator, dtype, shared_t5_table)));
  }
  if (config.pre_norm) norm = register_module("norm", std::make_shared<LayerNorm>(config.d_model, 1e-5, dtype));
}

template class Stack<EncoderLayer>;
template class Stack<DecoderLayer>;

// ---- the model -------------------------------------------------------------------------------------------

Transformer::Transformer(TransformerConfig config, uint64_t seed, DType dtype) : config_(std::move(config)) {
  config_.validate();
  Generator generator(seed);
  embedding_ = register_module("embedding",
                               std::make_shared<Embedding>(config_.vocabulary_size, config_.d_model, generator, dtype));
  encoder_ = register_module("encoder",
                             std::make_shared<Stack<EncoderLayer>>(config_, config_.encoder_layers, generator, dtype));
  decoder_ = register_module("decoder",
                             std::make_shared<Stack<DecoderLayer>>(config_, config_.decoder_layers, generator, dtype));
}

Variable Transformer::embed(const Tensor& ids, DropoutStream& dropout) {
  AGF_CHECK(ids.dim() == 2, "Transformer: token ids must be [B, T], got {}", ids.description());
  Variable x = embedding_->forward(ids) * std::sqrt(static_cast<double>(config_.d_model));
  if (config_.uses_sinusoidal()) {
    // In the parameters' dtype and on their device (Module::to may have moved or converted them).
    const Tensor table = sinusoidal_positions(ids.size(1), config_.d_model, x.dtype()).to(x.data().device());
    x = x + Variable(table);  // [T, D] broadcast over the batch
  }
  return dropout.apply(x, config_.dropout, training());
}

Variable Transformer::encode(const Tensor& encoder_input, const Tensor& source_lengths, DropoutStream& dropout) {
  Variable x = embed(encoder_input, dropout);
  for (const auto& layer : encoder_->layers) x = layer->forward(x, source_lengths, dropout);
  return encoder_->norm ? encoder_->norm->forward(x) : x;
}

Variable Transformer::decode(const Tensor& decoder_input, const Variable& memory, const Tensor& source_lengths,
                             DropoutStream& dropout) {
  Variable y = embed(decoder_input, dropout);
  for (const auto& layer : decoder_->layers) y = layer->forward(y, memory, source_lengths, dropout);
  return decoder_->norm ? decoder_->norm->forward(y) : y;
}

Variable Transformer::project(const Variable& hidden) const {
  // logits = h · Eᵀ: the output projection is the embedding table itself (tied, no bias).
  const Shape shape = hidden.shape();
  const Variable rows = reshape(hidden, {-1, config_.d_model});
  const Variable logits = matmul(rows, transpose(embedding_->weight(), 0, 1));
  return reshape(logits, {shape[0], shape[1], config_.vocabulary_size});
}

Variable Transformer::forward(const Tensor& encoder_input, const Tensor& source_lengths, const Tensor& decoder_input,
                              DropoutStream& dropout) {
  const Variable memory = encode(encoder_input, source_lengths, dropout);
  return project(decode(decoder_input, memory, source_lengths, dropout));
}

std::vector<std::pair<std::string, const PositionalEncoding*>> Transformer::positional_encodings() const {
  std::vector<std::pair<std::string, const PositionalEncoding*>> found;
  for (std::size_t l = 0; l < encoder_->layers.size(); ++l) {
    found.emplace_back(fmt::format("encoder.layers.{}.self_attn.pos", l),
                       &encoder_->layers[l]->self_attention().positional());
  }
  for (std::size_t l = 0; l < decoder_->layers.size(); ++l) {
    found.emplace_back(fmt::format("decoder.layers.{}.self_attn.pos", l),
                       &decoder_->layers[l]->self_attention().positional());
  }
  return found;
}

}  // namespace agf::nn
