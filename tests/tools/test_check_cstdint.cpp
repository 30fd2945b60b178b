// tools/check_cstdint.py: every source that uses a fixed-width integer type includes <cstdint>, itself or
// through a project header (newer compilers' <string> no longer brings it along: the GPU machine's g++ 13).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "tests/tools/cli_runner.h"

namespace {
const std::string kChecker = std::string(AGF_SOURCE_DIR) + "/tools/check_cstdint.py";

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}
}  // namespace

TEST_CASE("every agf source that uses std::int64_t and its kin includes <cstdint>", "[tools][includes]") {
  const CommandResult run = run_command("python3 " + kChecker + " " + AGF_SOURCE_DIR);
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.empty());
}

TEST_CASE("check_cstdint.py names a file that leans on <string> for <cstdint>", "[tools][includes]") {
  const auto root = std::filesystem::temp_directory_path() / ("agf_check_cstdint_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  write(root / "lib/size.h", "#pragma once\n#include <cstdint>\nusing Size = std::int64_t;\n");
  write(root / "lib/through_header.cpp", "#include \"lib/size.h\"\nstd::uint32_t n = 0;\n");
  write(root / "lib/leaning.h", "#pragma once\n#include <string>\n// std::int8_t in a comment is not a use\n"
                                "inline std::uint64_t hash(const std::string& s) { return s.size(); }\n");
  const CommandResult run = run_command("python3 " + kChecker + " " + root.string());
  std::filesystem::remove_all(root);
  INFO(run.output);
  CHECK(run.status == 1);
  CHECK_THAT(run.output, Catch::Contains("lib/leaning.h: uses a fixed-width integer type"));
  CHECK_THAT(run.output, !Catch::Contains("through_header.cpp") && !Catch::Contains("size.h"));
}
