#pragma once
// Embedding: a table [V, D] of learnable rows. The Transformer shares one table between the encoder
// input, the decoder input and the output projection (logits = h·Wᵀ).
#include "core/random.h"
#include "nn/module.h"

namespace agf::nn {

class Embedding : public Module {
 public:
  // Rows ~ N(0, D^-½) (fairseq's Transformer initialisation: after the √D scaling, unit variance).
  Embedding(int64_t vocabulary_size, int64_t features, Generator& generator, DType dtype = DType::f32);

  Variable forward(const Tensor& ids) const;  // ids [...] (i32/i64) -> [..., D]
  const Variable& weight() const { return weight_; }
  int64_t vocabulary_size() const { return weight_.size(0); }
  int64_t features() const { return weight_.size(1); }

 private:
  Variable weight_;
};

// LayerNorm over the last axis with learnable weight (ones) and bias (zeros).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t features, double eps = 1e-5, DType dtype = DType::f32);
  Variable forward(const Variable& x) const;

 private:
  Variable weight_, bias_;
  double eps_;
};

// The source of dropout masks for a whole model: one Philox seed and a running offset, advanced by each
// dropout call, so a run is reproducible and a checkpoint can resume the stream exactly (SPEC §6 dropout
// after attention weights, after each sublayer and on embeddings).
class DropoutStream {
 public:
  explicit DropoutStream(uint64_t seed = 0) : generator_(seed) {}
  // Dropout with probability p when `training`, else identity. Reserves numel(x) values of the stream.
  Variable apply(const Variable& x, double p, bool training);
  // Reserves `elements` values of the stream for an op that draws its own mask (attention weights).
  uint64_t reserve(int64_t elements) { return generator_.advance(elements); }
  Generator& generator() { return generator_; }

 private:
  Generator generator_;
};

}  // namespace agf::nn
