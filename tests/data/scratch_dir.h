#pragma once
// A fresh temporary directory for one test, removed when the test ends.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "data/text_file.h"

namespace agf::test {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "agf-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `content` to a file named `name` in the directory and returns its path.
  std::string write(const std::string& name, const std::string& content, bool xz = false) const {
    agf::data::write_file(file(name), content, xz);
    return file(name);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace agf::test
