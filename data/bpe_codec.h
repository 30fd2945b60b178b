#pragma once
// Encoding text to BPE ids and decoding ids back to text.
//
// encode(line): pre-tokenize (pretokenizer.h), then for each word
//   1. spell it as alphabet ids, one a character (the space as "▁"); a character outside the alphabet
//      (and a literal "▁" in the input, which must not decode as a space) becomes the byte tokens of
//      its UTF-8 form;
//   2. repeatedly take the adjacent pair whose merge was learned earliest and merge all its
//      occurrences, left to right, until no adjacent pair has a merge. Byte tokens never merge.
// This reproduces exactly the segmentation the learner gave the training words, since applying merges
// in rank order is what the learner did. Words are cached (one cache per thread).
//
// decode(ids) concatenates each token's surface bytes, so decode(encode(x)) == x for every valid
// UTF-8 line x: every byte of x is in exactly one token, spaces come back from "▁", and bytes that
// were spelled with byte tokens come back as themselves.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/bpe_model.h"

namespace agf::data {

class BpeCodec {
 public:
  explicit BpeCodec(const BpeModel& model);

  // `line` must be valid UTF-8 (check with find_invalid_utf8 first); it should hold no '\n'.
  std::vector<TokenId> encode(std::string_view line) const;
  void encode_append(std::string_view line, std::vector<TokenId>& out) const;
  // Encodes many lines on all OpenMP threads; result[i] belongs to lines[i].
  std::vector<std::vector<TokenId>> encode_lines(const std::vector<std::string_view>& lines) const;

  std::string decode(std::span<const TokenId> ids) const;  // throws on an id outside the vocabulary

  // Token texts for printing ("▁the", "<0xE2>"), and back.
  std::vector<std::string> to_texts(std::span<const TokenId> ids) const;
  const BpeModel& model() const { return model_; }

 private:
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;

  const BpeModel& model_;
  // (left id << 32 | right id) -> merge rank; the merged id is first_merge_id + rank.
  std::unordered_map<std::uint64_t, std::int32_t> merge_ranks_;
  std::uint64_t serial_ = 0;  // tells this codec's cached words from another's
  struct WordCache;
  static WordCache& thread_cache(const BpeCodec* owner);
};

}  // namespace agf::data
