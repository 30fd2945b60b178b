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
  std::string
  to_string() const;  // "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)"
};

// references[r][i] is reference set r for hypothesis i (sacreBLEU's layout).
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references);

}  // namespace agf::train
