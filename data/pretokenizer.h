#pragma once
// The pre-tokenizer: cuts a line into "words", the units BPE merges within (merges never cross a
// word boundary). It is lossless: the words concatenate back to the line, byte for byte.
//
// Rule (agf-split-v1). Every code point has a class: space (U+0020 only), letter, digit (0-9),
// punctuation/symbol, or other (control characters and whitespace other than U+0020). A word is
//   [optional one space] then a maximal run of code points of one class (letter, digit, punctuation
//   or other),
// so a new word starts before every space and wherever the class changes. A space followed by another
// space, or ending the line, is a word by itself. Examples (· marks the cuts):
//   "Hello, world!"  ->  "Hello" · "," · " world" · "!"
//   "a  b 42€"       ->  "a" · " " · " b" · " 42" · "€"
// "letter" is everything not listed elsewhere, so letters of every script, combining marks (which
// stay with their base letter) and CJK all fall in it. Punctuation/symbol is ASCII punctuation, the
// Latin-1 symbols U+00A1..U+00BF, U+00D7, U+00F7, General Punctuation U+2010..U+205E, currency
// U+20A0..U+20CF, arrows/maths/technical/box drawing/shapes/dingbats U+2190..U+2BFF, CJK punctuation
// U+3000..U+303F, full-width ASCII punctuation, and emoji/pictographs U+1F000..U+1FAFF.
#include <string_view>
#include <vector>

namespace agf::data {

enum class CharClass : unsigned char { space, letter, digit, punctuation, other };

CharClass classify(char32_t code_point);

// Calls `on_word(std::string_view word)` for each word of a valid UTF-8 `line`, in order.
template <class OnWord>
void for_each_word(std::string_view line, OnWord&& on_word);

std::vector<std::string_view> split_words(std::string_view line);

}  // namespace agf::data

#include "data/pretokenizer_impl.h"
