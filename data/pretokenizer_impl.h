#pragma once
// The inline body of for_each_word (see pretokenizer.h): it sits on the hot path of both learning and
// encoding, so it is a template the compiler can inline into its callers.
#include "data/utf8.h"

namespace agf::data {

template <class OnWord>
void for_each_word(std::string_view line, OnWord&& on_word) {
  const std::size_t size = line.size();
  std::size_t word_start = 0;
  std::size_t position = 0;
  bool have_class = false;  // whether the current word has seen a non-space code point
  CharClass word_class = CharClass::other;
  while (position < size) {
    const std::size_t here = position;
    const unsigned char byte = static_cast<unsigned char>(line[position]);
    const char32_t code_point = byte < 0x80 ? (++position, char32_t(byte)) : decode_utf8(line, position);
    const CharClass current = classify(code_point);
    if (current == CharClass::space) {
      if (here > word_start) on_word(line.substr(word_start, here - word_start));
      word_start = here;
      have_class = false;
      continue;
    }
    if (have_class && current != word_class) {
      on_word(line.substr(word_start, here - word_start));
      word_start = here;
    }
    have_class = true;
    word_class = current;
  }
  if (size > word_start) on_word(line.substr(word_start));
}

}  // namespace agf::data
