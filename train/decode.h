#pragma once
// Translation with a trained model: greedy search (batched) and beam search with a length penalty.
#include <cstdint>
#include <vector>

#include "nn/transformer.h"

namespace agf::train {

// The widest beam: every step ranks up to beam² candidate hypotheses, which outgrow memory long before
// a wider beam could help (translation quality stops improving at a few dozen).
inline constexpr int max_beam = 256;

struct DecodeOptions {
  int beam = 1;                 // 1 = greedy, at most max_beam
  double length_penalty = 1.0;  // beam: hypotheses ranked by log-probability / length^α
  int64_t max_length_a = 2;     // stop at a·(source length) + b target tokens
  int64_t max_length_b = 10;
  std::size_t batch_sentences = 64;  // greedy: sentences decoded together (sorted by length)
};

// BPE ids of each source sentence (no eos) -> BPE ids of its translation (no bos/eos). Runs in
// evaluation mode without recording a graph; the model's training flag is restored afterwards.
std::vector<std::vector<int32_t>> translate(nn::Transformer& model, const std::vector<std::vector<int32_t>>& sources,
                                            const DecodeOptions& options = {});

}  // namespace agf::train
