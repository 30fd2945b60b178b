#pragma once
// Checks of numeric flag values. CLI11's own (PositiveNumber, NonNegativeNumber, Range) let nan through,
// since every comparison with nan is false, and print their bounds with std::to_string, which spells
// DBL_MAX as 309 digits. These read the value as a double, refuse nan and ±inf, and name the rule:
//   --lr: expected a positive number, got 'nan'
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>

namespace agf::cli {

// Accepts a finite number for which `accepts` holds; `expected` says which ("a positive number").
inline CLI::Validator number_check(const std::string& expected, std::function<bool(double)> accepts) {
  return CLI::Validator(
      [expected, accepts](std::string& input) -> std::string {
        double value = 0;
        if (CLI::detail::lexical_cast(input, value) && std::isfinite(value) && accepts(value)) return {};
        return fmt::format("expected {}, got '{}'", expected, input);
      },
      expected);
}

inline CLI::Validator finite_number() {
  return number_check("a finite number", [](double) { return true; });
}
inline CLI::Validator positive_number() {
  return number_check("a positive number", [](double value) { return value > 0; });
}
inline CLI::Validator non_negative_number() {
  return number_check("a number >= 0", [](double value) { return value >= 0; });
}
// [min, max], or [min, max) when `max_included` is false.
inline CLI::Validator number_between(double min, double max, bool max_included = true) {
  return number_check(fmt::format("a number from {} to {}{}", min, max, max_included ? "" : " (excluded)"),
                      [=](double value) { return value >= min && (max_included ? value <= max : value < max); });
}

}  // namespace agf::cli
