#pragma once
// The encoder–decoder Transformer of SPEC §6 (docs/model.md has every detail): one joint embedding table
// shared by encoder input, decoder input and output projection, post-norm residual blocks (pre-norm as an
// option), ReLU feed-forward, any positional scheme in the self-attention, none in cross-attention.
#include <memory>
#include <vector>

#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/multi_head_attention.h"
#include "nn/positional/schemes.h"
#include "nn/transformer_config.h"

namespace agf::nn {

// ffn(x) = fc2(relu(fc1(x)))
class FeedForward : public Module {
 public:
  FeedForward(int64_t d_model, int64_t hidden, Generator& generator, DType dtype);
  Variable forward(const Variable& x) const;

 private:
  std::shared_ptr<Linear> fc1_, fc2_;
};

class EncoderLayer : public Module {
 public:
  EncoderLayer(const TransformerConfig& config, Generator& generator, DType dtype, const Variable& shared_t5_table);
  Variable forward(const Variable& x, const Tensor& source_lengths, DropoutStream& dropout);
  const MultiHeadAttention& self_attention() const { return *self_attn_; }

 private:
  TransformerConfig config_;
  std::shared_ptr<MultiHeadAttention> self_attn_;
  std::shared_ptr<FeedForward> ffn_;
  std::shared_ptr<LayerNorm> norm1_, norm2_;
};

class DecoderLayer : public Module {
 public:
  DecoderLayer(const TransformerConfig& config, Generator& generator, DType dtype, const Variable& shared_t5_table);
  Variable forward(const Variable& y, const Variable& memory, const Tensor& source_lengths, DropoutStream& dropout);
  const MultiHeadAttention& self_attention() const { return *self_attn_; }

 private:
  TransformerConfig config_;
  std::shared_ptr<MultiHeadAttention> self_attn_, cross_attn_;
  std::shared_ptr<FeedForward> ffn_;
  std::shared_ptr<LayerNorm> norm1_, norm2_, norm3_;
};

// One stack of layers (the encoder or the decoder), with its T5 table and pre-norm final norm if any.
template <class Layer>
class Stack : public Module {
 public:
  Stack(const TransformerConfig& config, int64_t layers, Generator& generator, DType dtype);
  std::vector<std::shared_ptr<Layer>> layers;
  std::shared_ptr<T5BiasTable> t5_bias;  // t5 only
  std::shared_ptr<LayerNorm> norm;       // pre-norm only
};

class Transformer : public Module {
 public:
  // Parameters drawn from `seed` (the same seed gives the same model on every machine).
  Transformer(TransformerConfig config, uint64_t seed, DType dtype = DType::f32);
  const TransformerConfig& config() const { return config_; }

  // embed(ids) = E[ids]·√D (+ sinusoidal PE) -> dropout.   ids [B, T] -> [B, T, D]
  Variable embed(const Tensor& ids, DropoutStream& dropout);
  // encoder_input [B, Ts], source_lengths [B] -> memory [B, Ts, D]
  Variable encode(const Tensor& encoder_input, const Tensor& source_lengths, DropoutStream& dropout);
  // decoder_input [B, Tt] -> hidden [B, Tt, D]  (causal; source padding masked in cross-attention)
  Variable decode(const Tensor& decoder_input, const Variable& memory, const Tensor& source_lengths,
                  DropoutStream& dropout);
  // hidden [B, T, D] -> logits [B, T, V] = hidden · Eᵀ
  Variable project(const Variable& hidden) const;
  // encode + decode + project.
  Variable forward(const Tensor& encoder_input, const Tensor& source_lengths, const Tensor& decoder_input,
                   DropoutStream& dropout);

  const Embedding& embedding() const { return *embedding_; }
  // The attention modules' positional schemes, per stack and layer ("encoder.layers.0.self_attn.pos").
  std::vector<std::pair<std::string, const PositionalEncoding*>> positional_encodings() const;

 private:
  TransformerConfig config_;
  std::shared_ptr<Embedding> embedding_;
  std::shared_ptr<Stack<EncoderLayer>> encoder_;
  std::shared_ptr<Stack<DecoderLayer>> decoder_;
};

}  // namespace agf::nn
