#include "data/pretokenizer.h"

namespace agf::data {

CharClass classify(char32_t c) {
  if (c == U' ') return CharClass::space;
  if (c >= U'0' && c <= U'9') return CharClass::digit;
  if (c < 0x80) {
    if (c < 0x20 || c == 0x7F) return CharClass::other;
    if ((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z')) return CharClass::letter;
    return CharClass::punctuation;
  }
  if (c < 0xA0) return CharClass::other;   // C1 controls
  if (c == 0xA0) return CharClass::other;  // no-break space
  if ((c >= 0xA1 && c <= 0xBF) || c == 0xD7 || c == 0xF7) return CharClass::punctuation;
  if (c >= 0x2000 && c <= 0x200F) return CharClass::other;  // typographic spaces, zero-width marks
  if (c >= 0x2028 && c <= 0x202F) return CharClass::other;  // separators, embedding controls
  if (c >= 0x2010 && c <= 0x205E) return CharClass::punctuation;
  if (c >= 0x205F && c <= 0x206F) return CharClass::other;
  if (c >= 0x20A0 && c <= 0x20CF) return CharClass::punctuation;
  if (c >= 0x2190 && c <= 0x2BFF) return CharClass::punctuation;
  if (c == 0x3000) return CharClass::other;  // ideographic space
  if (c >= 0x3001 && c <= 0x303F) return CharClass::punctuation;
  if ((c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) ||
      (c >= 0xFF5B && c <= 0xFF65))
    return CharClass::punctuation;
  if (c == 0xFEFF) return CharClass::other;  // byte-order mark
  if (c >= 0x1F000 && c <= 0x1FAFF) return CharClass::punctuation;
  return CharClass::letter;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  for_each_word(line, [&](std::string_view word) { words.push_back(word); });
  return words;
}

}  // namespace agf::data
