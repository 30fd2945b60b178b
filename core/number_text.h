#pragma once
// Numbers read from text that files provide (checkpoint metadata): the whole text must be the number.
// "12abc", " 5", "1e8" as an integer, "-5" as an unsigned and out-of-range values give nullopt, where
// std::stoll and std::stoull read a prefix, wrap negatives, or throw without naming anything.
#include <charconv>
#include <optional>
#include <string_view>

namespace agf {

template <class Number>
std::optional<Number> parse_number(std::string_view text) {
  Number value{};
  const char* end = text.data() + text.size();
  const auto [stopped, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stopped != end) return std::nullopt;
  return value;
}

}  // namespace agf
