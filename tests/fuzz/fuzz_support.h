#pragma once
// What every libFuzzer target here shares: a scratch folder for the files the readers open, and the rule
// that a reader either succeeds or throws agf::Error. Anything else (a crash, another exception, a
// sanitizer report, a timeout or running out of memory) is a finding.
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"
#include "data/text_file.h"

namespace agf::fuzz {

// A file named `name` in a folder of this process's own under TMPDIR (else /tmp), removed at exit.
inline std::string scratch_file(const char* name) {
  static const std::string directory = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "agf-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    static const std::string made = pattern;
    std::atexit([] { std::filesystem::remove_all(made); });
    return pattern;
  }();
  return directory + "/" + name;
}

// `bytes` written to the scratch file `name`; returns its path.
inline std::string scratch_file_with(const char* name, std::string_view bytes) {
  const std::string path = scratch_file(name);
  agf::data::write_file(path, bytes);
  return path;
}

// Runs `function`; an agf::Error is a correct answer to bad input, and is swallowed.
template <class Function>
void expect_success_or_agf_error(Function&& function) {
  try {
    function();
  } catch (const agf::Error&) {
  }
}

// A property of a successful read that does not hold: abort, so that libFuzzer keeps the input.
inline void require(bool holds) {
  if (!holds) std::abort();
}

}  // namespace agf::fuzz
