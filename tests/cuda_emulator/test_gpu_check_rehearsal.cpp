// tools/gpu-check.sh, rehearsed on the CUDA emulator at tiny sizes (--rehearse): every command of a GPU run
// executes here, so that a typo or a changed flag cannot waste the few minutes of a real GPU. Checks the
// results.json that the GPU run will bring back: every stage in order, what it measured, and that the
// budget, --stages and a bad argument behave as the script's header says.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"

namespace {

const std::vector<std::string> stage_order{"build", "smoke",       "matmul",    "attention", "train-bf16", "train-fp16",
                                           "torch", "build-tests", "gpu-tests", "gradcheck", "paper-grid"};

// Runs the rehearsal with OUT=out and `arguments`; the emulator's binaries sit beside AGF_BINARY.
CommandResult rehearse(const std::string& out, const std::string& arguments) {
  const std::string build = std::filesystem::path(AGF_BINARY).parent_path().string();
  return run_command("OUT=" + out + " " + std::string(AGF_SOURCE_DIR) + "/tools/gpu-check.sh --rehearse " + build +
                     " " + arguments);
}

nlohmann::json read_results(const std::string& out) {
  std::ifstream in(out + "/results.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

const nlohmann::json& stage(const nlohmann::json& results, const std::string& name) {
  for (const auto& entry : results.at("stages"))
    if (entry.at("name") == name) return entry;
  FAIL("no stage " << name << " in results.json");
  throw;  // not reached
}

}  // namespace

TEST_CASE("gpu-check.sh rehearsed on the emulator runs every stage and writes results.json", "[gpu-check]") {
  agf::test::ScratchDir scratch;
  const std::string out = scratch.file("out");
  const CommandResult run = rehearse(out, "--budget 400");
  INFO(run.output);
  REQUIRE(run.status == 0);
  const nlohmann::json results = read_results(out);
  CHECK(results.at("mode") == "rehearsal");
  CHECK_FALSE(results.at("versions").at("nvcc").get<std::string>().empty());

  const auto& stages = results.at("stages");
  REQUIRE(stages.size() == stage_order.size());
  for (std::size_t i = 0; i < stage_order.size(); ++i) {
    INFO(stages[i].dump());
    CHECK(stages[i].at("name") == stage_order[i]);
    CHECK(std::filesystem::exists(out + "/" + stages[i].at("log").get<std::string>()));
    // The peer stage is the one that may be skipped here: only when no Python with torch is installed.
    if (stages[i].at("name") == "torch" && stages[i].at("status") == "skipped")
      CHECK_THAT(stages[i].at("reason").get<std::string>(), Catch::Contains("cannot import torch"));
    else CHECK(stages[i].at("status") == "passed");
  }
  CHECK(results.at("summary").at("failed") == 0);

  // What each stage measured, as the GPU run will report it.
  const double ln_v = std::log(50.0);
  for (const char* key : {"tiny_first_loss", "bf16_first_loss"}) {
    const double loss = stage(results, "smoke").at("metrics").at(key);
    CHECK(loss > 0.8 * ln_v);
    CHECK(loss < 1.5 * ln_v);
  }
  for (const char* dtype : {"bf16_tflops", "fp16_tflops", "f32_tflops"})
    CHECK(stage(results, "matmul").at("metrics").at(dtype).is_number());
  for (const char* precision : {"train-bf16", "train-fp16"}) {
    const auto& metrics = stage(results, precision).at("metrics");
    CHECK(metrics.at("tokens_per_s").get<double>() > 0);
    CHECK(metrics.at("mfu_percent").is_number());
    CHECK(std::isfinite(metrics.at("last_loss").get<double>()));
  }
  const auto& tests = stage(results, "gpu-tests").at("metrics");
  CHECK(tests.at("test_cases") == 2);  // the rehearsal's spec: the [concat] and [rope] GPU cases
  CHECK(tests.at("failed_test_cases") == 0);
  CHECK(stage(results, "gradcheck").at("metrics").at("checked") == 1);
  CHECK(stage(results, "gradcheck").at("metrics").at("failed") == 0);
  // The paper's six rows, in the grid's results table.
  std::ifstream table(out + "/paper-grid.md");
  const std::string text((std::istreambuf_iterator<char>(table)), {});
  for (const char* row : {"| vanilla |", "| agf-b |", "| agf-b+pcmv |", "| agf-m+pcmv |", "| agf-m+pcmv+abs-pe |",
                          "| alibi-mult+pcmv |"}) {
    INFO(text);
    CHECK_THAT(text, Catch::Contains(row));
  }
}

TEST_CASE("gpu-check.sh skips what the budget or --stages leaves out, and refuses bad arguments", "[gpu-check]") {
  agf::test::ScratchDir scratch;
  SECTION("--stages: only the named stages run; a dependency left out does not block them") {
    const std::string out = scratch.file("some");
    const CommandResult run = rehearse(out, "--stages smoke,gradcheck");
    INFO(run.output);
    REQUIRE(run.status == 0);
    const nlohmann::json results = read_results(out);
    CHECK(stage(results, "smoke").at("status") == "passed");
    CHECK(stage(results, "gradcheck").at("status") == "passed");
    CHECK(stage(results, "build").at("status") == "skipped");
    CHECK(stage(results, "build").at("reason") == "not in --stages");
    CHECK(results.at("summary").at("passed") == 2);
  }
  SECTION("a budget too small for any stage: every stage skipped, with the reason, and exit 1") {
    const std::string out = scratch.file("none");
    const CommandResult run = rehearse(out, "--budget 40");
    INFO(run.output);
    CHECK(run.status == 1);
    CHECK_THAT(run.output, Catch::Contains("no stage ran"));
    const nlohmann::json results = read_results(out);
    CHECK(results.at("summary").at("skipped") == stage_order.size());
    CHECK_THAT(stage(results, "build").at("reason").get<std::string>(), Catch::Contains("the budget has"));
  }
  SECTION("bad arguments") {
    const CommandResult stages = rehearse(scratch.file("bad"), "--stages smoke,bogus");
    CHECK(stages.status == 2);
    CHECK_THAT(stages.output, Catch::Contains("unknown stage 'bogus'"));
    const CommandResult budget = rehearse(scratch.file("bad"), "--budget soon");
    CHECK(budget.status == 2);
    CHECK_THAT(budget.output, Catch::Contains("--budget must be a whole number"));
  }
}
