#pragma once
// Learning a joint BPE model from text.
//
//  1. Count words: every line of every input is pre-tokenized (pretokenizer.h); identical words are
//     counted once with their frequency f(w).
//  2. Alphabet: characters ranked by frequency (ties: smaller code point first); the most frequent are
//     kept until they cover `character_coverage` of all character occurrences. U+2581 ("▁") is never
//     in it: it stands for the space. Others fall back to byte tokens.
//  3. Merges: count(a, b) = sum over words w of f(w) x (occurrences of a b in w). Repeatedly merge the
//     pair with the highest count into a new token, until the vocabulary holds `vocab_size` tokens or
//     no pair reaches `min_frequency`.
//     Tie rule: among pairs of equal count, the one whose (left text, right text) is smallest in
//     byte-wise lexicographic order wins. A pair whose joined text equals an existing token (a special
//     or byte token such as "<s>") is never merged, so token texts stay unique.
//     Counts are kept incrementally: a merge visits only the words that hold the pair (an index
//     pair -> words) and adjusts the counts of the neighbouring pairs it destroys and creates; a
//     max-heap with lazy deletion finds the best pair (a popped entry whose count is stale is
//     re-pushed with its current count).
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_model.h"

namespace agf::data {

struct BpeLearnOptions {
  std::size_t vocab_size = 8000;  // total, including the 4 specials and 256 byte tokens
  double character_coverage = 0.9999;
  std::uint64_t min_frequency = 2;  // a pair seen fewer times is not worth a token
};

// Lines must be valid UTF-8 (the caller checks and reports where they are not).
BpeModel learn_bpe(const std::vector<std::string_view>& lines, const BpeLearnOptions& options);

}  // namespace agf::data
