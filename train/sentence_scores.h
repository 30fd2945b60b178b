#pragma once
// Per-sentence evaluation results (train/evaluate.h's SentenceScore) as a file: one JSON object per line,
//   {"index": 0, "source_tokens": 12, "target_tokens": 14, "correct": 9, "nll": 17.2,
//    "hypothesis": "...", "reference": "...", "bleu": {"matches": [..4], "totals": [..4], "hyp_len": 11, "ref_len": 12}}
// (the last three only for a translated sentence; a hypothesis's invalid UTF-8 is written as U+FFFD). `agf eval
// --sentences` writes it, `agf compare` reads two.
#include <string>
#include <vector>

#include "train/evaluate.h"

namespace agf::train {

// xz-compressed when `path` ends in ".xz" (the reader decompresses any xz file, whatever its name).
void write_sentence_scores(const std::string& path, const std::vector<SentenceScore>& sentences);

// Every line checked: an error names the file, the line and what is wrong with it.
std::vector<SentenceScore> read_sentence_scores(const std::string& path);

// Token accuracy by source length: bucket b holds the sentences with upper[b-1] < source_tokens <= upper[b]
// (upper[-1] = -1), and a last bucket those above the last bound. `upper` ascending.
struct LengthBucket {
  int64_t low = 0, high = -1;  // source tokens in [low, high]; high = -1: no upper bound
  int64_t pairs = 0, source_tokens = 0, target_tokens = 0, correct = 0;
  double token_accuracy() const;  // in %; 0 for an empty bucket
};
std::vector<LengthBucket> length_buckets(const std::vector<SentenceScore>& sentences,
                                         const std::vector<int64_t>& upper);

}  // namespace agf::train
