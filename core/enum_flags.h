#pragma once
// An enum as a command-line value: `all` lists the values a flag can name, `flag_of` gives each one's text
// ("onednn", "amx", "linear"). One list and one naming function per enum, and these two derive the flag's
// accepted values (for CLI::IsMember) and the way back from a text.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agf {

template <typename Enum, std::size_t N, typename FlagOf>
std::vector<std::string> enum_flags(const Enum (&all)[N], FlagOf flag_of) {
  std::vector<std::string> flags;
  for (const Enum value : all) flags.emplace_back(flag_of(value));
  return flags;
}

// The value whose flag is `flag`; nullopt for any other text.
template <typename Enum, std::size_t N, typename FlagOf>
std::optional<Enum> parse_enum_flag(const Enum (&all)[N], FlagOf flag_of, std::string_view flag) {
  for (const Enum value : all) {
    if (flag_of(value) == flag) return value;
  }
  return std::nullopt;
}

}  // namespace agf
