#pragma once
// The floating-point work of one training step of the Transformer, for model FLOP utilisation (MFU):
// what the model needs, counted from its matrix products, not what a kernel happens to execute.
//
// Per token, a matrix product with an [n_in, n_out] weight costs 2·n_in·n_out FLOPs forward (a multiply
// and an add per weight). With d = d_model, f = ffn, S / T the source / target lengths, V the vocabulary:
//   encoder layer, per source token:  attention projections q,k,v,o 4·d² + FFN 2·d·f      → 2·(4d² + 2df)
//                                     scores q·kᵀ and weights·v over S keys: 2·S·d MACs   → 2·(2Sd)
//   decoder layer, per target token:  self-attention 4d² + cross q,o 2d² + FFN 2df       → 2·(6d² + 2df)
//                                     self scores over T keys 2Td, cross scores over S 2Sd → 2·(2Td + 2Sd)
//                per source token:    cross-attention k,v projections of the memory 2d²  → 2·(2d²)
//   output projection, per target token: d·V                                              → 2·dV
// (Causal self-attention is counted over all T keys, as the dense kernels compute it; embeddings,
// norms, softmax and the positional terms are elementwise and left out, as MFU conventionally does.)
// Training = forward + backward, the backward costing two products per forward product: 3 × forward.
#include <cstdint>

#include "nn/transformer_config.h"

namespace agf::nn {

inline double training_step_flops(const TransformerConfig& config, int64_t batch, int64_t source_length,
                                  int64_t target_length) {
  const double d = static_cast<double>(config.d_model), f = static_cast<double>(config.ffn);
  const double S = static_cast<double>(source_length), T = static_cast<double>(target_length);
  const double V = static_cast<double>(config.vocabulary_size);
  const double encoder_per_token = 2 * (4 * d * d + 2 * d * f) + 2 * (2 * S * d);
  const double decoder_per_token = 2 * (6 * d * d + 2 * d * f) + 2 * (2 * T * d + 2 * S * d);
  const double memory_per_source_token = 2 * (2 * d * d);
  const double forward = static_cast<double>(batch) *
                         (S * config.encoder_layers * encoder_per_token +
                          config.decoder_layers * (T * decoder_per_token + S * memory_per_source_token) +
                          T * 2 * d * V);
  return 3 * forward;
}

}  // namespace agf::nn
