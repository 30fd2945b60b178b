#pragma once
// Teacher-forced evaluation on a dataset (SPEC §6): loss, perplexity and the paper's token accuracy —
// the share of non-padding target positions (eos included) whose argmax equals the reference — and BLEU
// of greedy translations of the first sentences.
#include <cstdint>
#include <string>

#include "data/bpe_codec.h"
#include "data/token_dataset.h"
#include "nn/transformer.h"
#include "train/bleu.h"
#include "train/decode.h"

namespace agf::train {

struct EvaluationResult {
  double loss = 0;            // label-smoothed cross-entropy per target token (as trained)
  double nll = 0;             // plain negative log-likelihood per target token
  double perplexity = 0;      // exp(nll)
  double token_accuracy = 0;  // in %
  int64_t target_tokens = 0;
  int64_t bleu_sentences = 0;  // 0 when BLEU was not computed
  BleuScore bleu;
};

struct EvaluationOptions {
  uint64_t max_tokens = 4096;
  double label_smoothing = 0.1;
  int64_t bleu_sentences = 0;  // translate the first N pairs greedily and score them; 0 = no BLEU
  DecodeOptions decode;
};

EvaluationResult evaluate(nn::Transformer& model, const data::TokenDataset& dataset, const data::BpeCodec& codec,
                          const EvaluationOptions& options);

}  // namespace agf::train
