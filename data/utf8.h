#pragma once
// UTF-8 helpers: validation (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF),
// decoding one code point, and encoding one. Every text that enters agf passes validate_utf8 first,
// so later stages may assume well-formed input.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace agf::data {

// The byte offset of the first malformed sequence, or nullopt when `text` is valid UTF-8.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

inline bool is_valid_utf8(std::string_view text) { return !find_invalid_utf8(text).has_value(); }

// Length in bytes of the (valid) UTF-8 sequence that starts with `lead`: 1..4.
inline std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Decodes the code point at text[position] of valid UTF-8 and advances position past it.
char32_t decode_utf8(std::string_view text, std::size_t& position);

// Appends the UTF-8 form of `code_point` (must be a Unicode scalar value).
void append_utf8(std::string& out, char32_t code_point);

}  // namespace agf::data
