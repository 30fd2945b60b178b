#pragma once
// A BPE vocabulary and its merges: the immutable "model" that the learner produces and the codec
// reads. Ids are laid out so that every model agrees on the fixed ones (SPEC-AGF section 6):
//
//   0 <pad>   1 <unk>   2 <s> (bos)   3 </s> (eos)
//   4..259    byte-fallback tokens <0x00>..<0xFF>: a character outside the alphabet is spelled as
//             the bytes of its UTF-8 form, one token a byte (as SentencePiece's byte_fallback)
//   260..     the alphabet: single characters, most frequent first; U+0020 (space) is written as
//             the marker "▁" (U+2581)
//   then      one token per merge, in the order learned: merge k makes id 260 + |alphabet| + k,
//             whose text is the concatenation of its two parts.
//
// Token texts are unique, so a sequence of token texts (what `agf bpe encode` prints) maps back to
// ids without ambiguity; the learner skips any merge whose text would equal an existing token.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agf::data {

using TokenId = std::int32_t;

inline constexpr TokenId pad_id = 0;
inline constexpr TokenId unk_id = 1;
inline constexpr TokenId bos_id = 2;
inline constexpr TokenId eos_id = 3;
inline constexpr TokenId first_byte_id = 4;
inline constexpr TokenId first_alphabet_id = 260;
inline constexpr char32_t whitespace_marker = U'\u2581';  // "▁" stands for U+0020 inside tokens
inline constexpr const char* whitespace_marker_utf8 = "\xE2\x96\x81";

class BpeModel {
 public:
  BpeModel() = default;
  // `alphabet`: the characters (as code points; U+0020 for the space) in id order.
  // `merges`: pairs of token ids, each referring to ids that exist before it.
  BpeModel(std::vector<char32_t> alphabet, std::vector<std::pair<TokenId, TokenId>> merges);

  std::size_t vocab_size() const { return texts_.size(); }
  const std::vector<char32_t>& alphabet() const { return alphabet_; }
  const std::vector<std::pair<TokenId, TokenId>>& merges() const { return merges_; }
  TokenId first_merge_id() const { return first_alphabet_id + static_cast<TokenId>(alphabet_.size()); }

  // The printable text of a token: "<s>", "<0xE2>", "▁the", ...
  const std::string& text(TokenId id) const { return texts_.at(static_cast<std::size_t>(id)); }
  // The bytes a token stands for in decoded text ("▁" -> " "; byte tokens -> that byte; pad, bos,
  // eos -> nothing; unk -> U+FFFD).
  const std::string& surface(TokenId id) const { return surfaces_.at(static_cast<std::size_t>(id)); }
  // The id of a token text, or -1.
  TokenId id_of_text(const std::string& text) const;
  // The alphabet id of a code point, or -1 when it is not in the alphabet (then it falls back to bytes).
  TokenId id_of_char(char32_t code_point) const {
    if (code_point < 128) return ascii_ids_[code_point];
    auto found = char_ids_.find(code_point);
    return found == char_ids_.end() ? -1 : found->second;
  }

  // A 64-bit FNV-1a hash of the alphabet and merges: binarized datasets record it, so data and model
  // cannot be mixed up.
  std::uint64_t hash() const { return hash_; }

  // JSON (see docs/bpe.md). Loading checks everything and names the file in its errors.
  void save(const std::string& path) const;
  static BpeModel load(const std::string& path);
  std::string to_json() const;
  static BpeModel from_json(const std::string& json_text, const std::string& name_for_errors);
  // A Hugging Face tokenizers `tokenizer.json` with the same vocabulary and merges (BPE with
  // byte_fallback). Its pre-tokenizer approximates agf-split-v1 with a regular expression.
  std::string to_huggingface_json() const;

 private:
  std::vector<char32_t> alphabet_;
  std::vector<std::pair<TokenId, TokenId>> merges_;
  std::vector<std::string> texts_;
  std::vector<std::string> surfaces_;
  std::unordered_map<std::string, TokenId> ids_by_text_;
  std::array<TokenId, 128> ascii_ids_{};
  std::unordered_map<char32_t, TokenId> char_ids_;
  std::uint64_t hash_ = 0;
};

}  // namespace agf::data
