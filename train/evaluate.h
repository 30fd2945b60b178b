#pragma once
// Teacher-forced evaluation on a dataset (SPEC §6): loss, perplexity and the paper's token accuracy —
// the share of non-padding target positions (eos included) whose argmax equals the reference — and BLEU
// of greedy translations of the first sentences.
#include <cstdint>
#include <string>
#include <vector>

#include "data/bpe_codec.h"
#include "data/token_dataset.h"
#include "nn/transformer.h"
#include "train/bleu.h"
#include "train/decode.h"

namespace agf::train {

// One pair's share of an evaluation (EvaluationOptions::per_sentence): what `agf eval --sentences` writes, what
// the length buckets add up and what a paired comparison of two models resamples (train/paired_bootstrap.h).
struct SentenceScore {
  int64_t index = 0;          // the pair's position in the dataset
  int64_t source_tokens = 0;  // the source's BPE tokens, eos not counted
  int64_t target_tokens = 0;  // target positions scored: the reference's tokens and eos
  int64_t correct = 0;        // of them, those whose argmax is the reference token
  double nll = 0;             // Σ -ln p(reference token) over them
  bool translated = false;    // hypothesis, reference and bleu hold the translation of this pair
  std::string hypothesis, reference;
  BleuStatistics bleu;
};

struct EvaluationResult {
  double loss = 0;            // label-smoothed cross-entropy per target token (as trained)
  double nll = 0;             // plain negative log-likelihood per target token
  double perplexity = 0;      // exp(nll)
  double token_accuracy = 0;  // in %
  int64_t target_tokens = 0;
  int64_t bleu_sentences = 0;  // 0 when BLEU was not computed
  BleuScore bleu;
  std::vector<SentenceScore> sentences;  // with per_sentence: one per pair, in dataset order
};

struct EvaluationOptions {
  uint64_t max_tokens = 4096;
  double label_smoothing = 0.1;
  int64_t bleu_sentences = 0;  // translate the first N pairs greedily and score them; 0 = no BLEU
  DecodeOptions decode;
  bool per_sentence = false;  // also fill EvaluationResult::sentences
};

EvaluationResult evaluate(nn::Transformer& model, const data::TokenDataset& dataset, const data::BpeCodec& codec,
                          const EvaluationOptions& options);

}  // namespace agf::train
