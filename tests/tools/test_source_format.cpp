// The sources keep the layout of .clang-format (applied once to every file; docs/architecture.md, "Style"):
// clang-format --dry-run over every tracked C++ and CUDA source finds nothing to change. clang-format 14 only
// (the configuration was tuned on it; other versions lay some constructs out differently), and only in a git
// checkout (the list of sources is git's); elsewhere the test skips, saying why.
#include <catch2/catch.hpp>

#include <string>

#include "tests/skip.h"
#include "tests/tools/cli_runner.h"

TEST_CASE("every C++ and CUDA source is laid out as .clang-format says", "[tools][format]") {
  const std::string source = AGF_SOURCE_DIR;
  const CommandResult version = run_command("clang-format --version 2>&1");
  if (version.status != 0) AGF_SKIP("clang-format is not installed (tools/setup.sh installs it)");
  if (version.output.find("version 14.") == std::string::npos) {
    AGF_SKIP("the .clang-format was tuned on clang-format 14; this is another version, which lays some code out "
             "differently");
  }
  const CommandResult files = run_command("git -C " + source + " ls-files -z '*.cpp' '*.h' '*.cu' '*.cuh' '*.cc' 2>&1");
  if (files.status != 0 || files.output.empty()) AGF_SKIP("the sources are not a git checkout, which lists them");
  const CommandResult check = run_command("cd " + source +
                                          " && git ls-files -z '*.cpp' '*.h' '*.cu' '*.cuh' '*.cc' | "
                                          "xargs -0 clang-format --dry-run -Werror 2>&1");
  INFO(check.output.substr(0, 4000));
  CHECK(check.status == 0);
  CHECK(check.output.empty());
}
