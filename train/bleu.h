#pragma once
// Corpus BLEU compatible with sacreBLEU's defaults (tokenize=13a, smooth=exp, 4-grams, closest reference
// length, case-sensitive): the same score to the printed precision on the same inputs.
#include <cstdint>
#include <string>
#include <vector>

namespace agf::train {

// mteval-v13a tokenization as sacreBLEU's Tokenizer13a: unescape a few entities, split punctuation,
// split '.' and ',' unless between digits, split '-' after a digit, collapse spaces.
std::string tokenize_13a(const std::string& line);

struct BleuScore {
  double score = 0;  // 0..100
  double precisions[4] = {0, 0, 0, 0};
  double brevity_penalty = 0;
  int64_t hypothesis_length = 0, reference_length = 0;
  // "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)"
  std::string to_string() const;
};

// references[r][i] is reference set r for hypothesis i (sacreBLEU's layout).
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references);

// What corpus BLEU sums over sentences: clipped n-gram matches and n-gram counts for n = 1..4, the hypothesis's
// length and the closest reference length. Corpus BLEU is bleu_score of the sum of the sentences' statistics,
// so a resample of sentences (train/paired_bootstrap.h) rescores by adding statistics, not text.
struct BleuStatistics {
  int64_t matches[4] = {0, 0, 0, 0}, totals[4] = {0, 0, 0, 0};
  int64_t hypothesis_length = 0, reference_length = 0;
  BleuStatistics& operator+=(const BleuStatistics& other);
};

// One hypothesis against its references (one or more), tokenized as corpus_bleu tokenizes.
BleuStatistics sentence_bleu_statistics(const std::string& hypothesis, const std::vector<std::string>& references);

// The score of summed statistics (brevity penalty, 'exp' smoothing), as corpus_bleu computes it.
BleuScore bleu_score(const BleuStatistics& statistics);

}  // namespace agf::train
