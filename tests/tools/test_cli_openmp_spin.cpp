// The `agf` program's OpenMP spin (tools/agf/openmp_spin.h): GOMP_SPINCOUNT=3000 unless the user chose a spin or
// a wait policy. libgomp prints the values it runs with under OMP_DISPLAY_ENV=verbose, once per start of the
// program: the default case shows libgomp's own value first, then the one the re-executed program runs with.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "tests/skip.h"
#include "tests/tools/cli_runner.h"
#include "tools/agf/openmp_spin.h"

namespace {

// The GOMP_SPINCOUNT values libgomp printed, in order.
std::vector<std::string> spin_counts(const std::string& environment) {
  const CommandResult run = run_command("env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose " +
                                        environment + " " + AGF_BINARY + " --version");
  INFO(run.output);
  REQUIRE(run.status == 0);
  REQUIRE_THAT(run.output, Catch::Contains("agf 0.1.0"));
  std::vector<std::string> values;
  const std::regex line(R"(GOMP_SPINCOUNT = '(\d+)')");
  for (auto it = std::sregex_iterator(run.output.begin(), run.output.end(), line); it != std::sregex_iterator(); ++it) {
    values.push_back((*it)[1]);
  }
  return values;
}

constexpr const char* kNotLibgomp = "this build's OpenMP runtime is not GCC's libgomp (a clang build links libomp)";

}  // namespace

TEST_CASE("agf runs with a short OpenMP spin by default", "[cli][threads]") {
  if (!AGF_OPENMP_LIBGOMP) AGF_SKIP(kNotLibgomp);
  const std::vector<std::string> values = spin_counts("");
  REQUIRE_FALSE(values.empty());
  CHECK(values.back() == agf::cli::kShortOpenmpSpin);
}

TEST_CASE("agf keeps the user's GOMP_SPINCOUNT or OMP_WAIT_POLICY and starts once", "[cli][threads]") {
  if (!AGF_OPENMP_LIBGOMP) AGF_SKIP(kNotLibgomp);
  CHECK(spin_counts("GOMP_SPINCOUNT=7") == std::vector<std::string>{"7"});
  const std::vector<std::string> active = spin_counts("OMP_WAIT_POLICY=active");
  REQUIRE(active.size() == 1);
  CHECK(active[0] != agf::cli::kShortOpenmpSpin);
}
