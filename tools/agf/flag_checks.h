#pragma once
// Checks of numeric flag values. CLI11's own (PositiveNumber, NonNegativeNumber, Range) let nan through,
// since every comparison with nan is false, and print their bounds with std::to_string, which spells
// DBL_MAX as 309 digits. These read the value as a double, refuse nan and ±inf, and name the rule:
//   --lr: expected a positive number, got 'nan'
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "core/number_text.h"

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

// The text of an integer flag as a whole number in base 10, within 64 bits, and >= 0 when `is_unsigned`.
// CLI11 converts integers with strtoll/strtoull in base 0: "-1" in an unsigned flag wraps to 2^64 - 1,
// "010" is octal 8, "0x10" is 16, and a value past 64 bits saturates, each without a word. This check
// runs before that conversion and passes the number on in canonical form ("+5" and "1e3" are refused).
inline CLI::Validator whole_number(bool is_unsigned) {
  return CLI::Validator(
      [is_unsigned](std::string& input) -> std::string {
        std::string canonical;
        if (is_unsigned) {
          if (const auto value = parse_number<std::uint64_t>(input)) canonical = std::to_string(*value);
        } else {
          if (const auto value = parse_number<std::int64_t>(input)) canonical = std::to_string(*value);
        }
        if (canonical.empty()) {
          // Digits alone (and a sign, where one is allowed) that still do not parse are out of range.
          const std::size_t first_digit = !is_unsigned && input.starts_with('-') ? 1 : 0;
          const bool too_large = input.size() > first_digit &&
                                 input.find_first_not_of("0123456789", first_digit) == std::string::npos;
          return fmt::format("expected a whole number{}{}, got '{}'", is_unsigned ? " >= 0" : "",
                             too_large ? " within 64 bits" : "", input);
        }
        input = canonical;
        return {};
      },
      "");
}

// Puts whole_number in front of the checks of every integer option of `app` and of its subcommands, so
// that no integer flag, present or future, is read the lenient way (CLI11 names their types INT and UINT).
inline void require_whole_numbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    const std::string base_type = type.substr(0, type.find(':'));
    if (base_type == "INT" || base_type == "UINT") option->transform(whole_number(base_type == "UINT"));
  }
  for (CLI::App* subcommand : app.get_subcommands([](CLI::App*) { return true; })) require_whole_numbers(*subcommand);
}

}  // namespace agf::cli
