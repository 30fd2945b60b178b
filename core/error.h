#pragma once
// agf::Error: the one exception type agf throws for bad input and misuse. Messages name the op (or
// file, line, argument) and the shapes/values involved, so a user can act on them without a debugger.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

namespace agf {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws agf::Error with a fmt-formatted message.
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace agf

// AGF_CHECK(condition, "format {}", args...): throws agf::Error when condition is false.
#define AGF_CHECK(condition, ...) \
  do {                            \
    if (!(condition)) {           \
      ::agf::fail(__VA_ARGS__);   \
    }                             \
  } while (false)
