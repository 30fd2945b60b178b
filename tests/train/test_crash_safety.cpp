// Crash safety (docs/crash-safety.md): --save-every checkpoints, atomic files, metrics.jsonl that holds whole
// lines only, and a full disk (simulated by a file-size limit) that stops the run with the previous
// checkpoint intact. The SIGKILL campaign is tests/train/test_kill_campaign.cpp.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/atomic_file.h"
#include "train/checkpoint.h"
#include "train/metrics_log.h"

namespace fs = std::filesystem;

using agf::test::train_losses;

namespace {

const std::string tiny_flags = " --preset tiny --pos agf-m --lr 3e-3 --warmup 30 --bleu-sentences 0 --quiet --threads 1"
                               " --dropout 0.1 --max-tokens 120";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::string> checkpoint_names(const std::string& run) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(run + "/checkpoints"))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Runs `agf ARGUMENTS` with the size of every file it writes limited to `max_file_bytes` (RLIMIT_FSIZE) and
// SIGXFSZ ignored, so that a write past the limit fails with EFBIG, as one on a full disk fails with ENOSPC.
CommandResult run_agf_with_file_limit(const std::string& arguments, rlim_t max_file_bytes, const std::string& log) {
  const pid_t child = ::fork();
  if (child == 0) {
    const rlimit limit{max_file_bytes, max_file_bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::signal(SIGXFSZ, SIG_IGN);
    const std::string command = "exec " + std::string(AGF_BINARY) + " " + arguments + " >" + log + " 2>&1";
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  CommandResult result;
  int status = 0;
  if (child > 0 && ::waitpid(child, &status, 0) == child) result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.output = read_text(log);
  return result;
}

}  // namespace

TEST_CASE("agf train --save-every writes step checkpoints without validating", "[train][cli][checkpoint]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string steps = scratch.file("steps");
  const auto trained = run_agf("train --data " + data + " --out " + steps + tiny_flags +
                               " --max-steps 7 --valid-every 100 --save-every 3 --keep-last 10");
  INFO(trained.output);
  REQUIRE(trained.status == 0);
  // Steps 3 and 6 by --save-every, 7 (with best.safetensors) by the validation at the end.
  CHECK(checkpoint_names(steps) == std::vector<std::string>{"best.safetensors", "step_00000003.safetensors",
                                                            "step_00000006.safetensors", "step_00000007.safetensors"});
  const auto validations = agf::test::metrics_records(steps, "valid");
  REQUIRE(validations.size() == 1);
  CHECK(validations[0].at("step") == 7);
  CHECK(agf::train::load_checkpoint(steps + "/checkpoints/step_00000003.safetensors").state->step == 3);

  // Minutes: a cadence shorter than a step checkpoints after every step; --keep-last still prunes.
  const std::string minutes = scratch.file("minutes");
  const auto timed = run_agf("train --data " + data + " --out " + minutes + tiny_flags +
                             " --max-steps 5 --valid-every 100 --save-every-minutes 1e-9 --keep-last 2");
  INFO(timed.output);
  REQUIRE(timed.status == 0);
  CHECK(checkpoint_names(minutes) ==
        std::vector<std::string>{"best.safetensors", "step_00000004.safetensors", "step_00000005.safetensors"});
  // And a run resumed from a --save-every checkpoint continues exactly.
  const std::string whole = scratch.file("whole");
  REQUIRE(
      run_agf("train --data " + data + " --out " + whole + tiny_flags + " --max-steps 9 --valid-every 100").status ==
      0);
  REQUIRE(run_agf("train --data " + data + " --out " + steps + tiny_flags + " --max-steps 9 --valid-every 100 --resume")
              .status == 0);
  CHECK(train_losses(steps) == train_losses(whole));

  const auto negative = run_agf("train --data " + data + " --out " + scratch.file("bad") + " --save-every -1");
  CHECK(negative.status == 2);
  const auto not_a_number = run_agf("train --data " + data + " --out " + scratch.file("bad") +
                                    " --save-every-minutes nan");
  CHECK(not_a_number.status == 2);
  CHECK_THAT(not_a_number.output, Catch::Contains("--save-every-minutes") && Catch::Contains("expected a number >= 0"));
}

TEST_CASE("an atomic file replaces its target whole, or leaves it as it was", "[train][checkpoint]") {
  agf::test::ScratchDir scratch;
  const std::string path = scratch.write("target", "old\n");
  {
    agf::train::AtomicFile file(path);
    file.write("new", 3);
    CHECK(read_text(path) == "old\n");  // nothing visible before commit
    CHECK(fs::exists(path + ".tmp"));
  }  // not committed (an exception on the way): discarded
  CHECK(read_text(path) == "old\n");
  CHECK_FALSE(fs::exists(path + ".tmp"));
  agf::train::AtomicFile file(path);
  file.write("new\n", 4);
  file.commit();
  CHECK(read_text(path) == "new\n");
  CHECK_FALSE(fs::exists(path + ".tmp"));
  CHECK_THROWS_WITH(agf::train::AtomicFile(scratch.file("no-such-folder/file")),
                    Catch::Contains("no-such-folder/file.tmp: cannot create"));
}

TEST_CASE("metrics.jsonl lines never cross a page boundary, and resuming keeps the lines up to its step",
          "[train][metrics]") {
  agf::test::ScratchDir scratch;
  const std::string path = scratch.file("metrics.jsonl");
  const long page = ::sysconf(_SC_PAGESIZE);
  auto record = [](int64_t step) {
    // Lengths that vary, as the digits of real losses do.
    return nlohmann::json{
        {"step", step}, {"split", "train"}, {"note", std::string(static_cast<std::size_t>(step * 37 % 300), 'x')}};
  };
  {
    agf::train::MetricsLog log(path, -1);
    for (int64_t step = 1; step <= 200; ++step) log.write(record(step));
    log.sync();
  }
  // Every write stays inside one page, where a kill cannot cut it: every line starts and ends in one page.
  const std::string text = read_text(path);
  REQUIRE(text.size() > static_cast<std::size_t>(4 * page));
  REQUIRE(text.back() == '\n');
  int64_t expected_step = 1;
  int padded = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);  // the line is [start, end]
    REQUIRE(end != std::string::npos);
    INFO("line at byte " << start);
    CHECK(start / static_cast<std::size_t>(page) == end / static_cast<std::size_t>(page));
    const std::string line = text.substr(start, end - start);
    CHECK(nlohmann::json::parse(line) == record(expected_step++));
    if (line.back() == ' ') ++padded;
    start = end + 1;
  }
  CHECK(expected_step == 201);
  CHECK(padded > 0);  // the padding was needed, and the padded lines still parse as their records

  // A resumed run: the lines past its checkpoint's step and a line cut short by an older version are dropped.
  {
    std::ofstream(path, std::ios::app) << R"({"step": 201, "split": "tr)";
    agf::train::MetricsLog log(path, 150);
    log.write(record(151));
  }
  std::vector<int64_t> steps;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    steps.push_back(nlohmann::json::parse(line).at("step").get<int64_t>());
  REQUIRE(steps.size() == 151);
  CHECK(steps.front() == 1);
  CHECK(steps[149] == 150);
  CHECK(steps.back() == 151);
  CHECK_FALSE(fs::exists(path + ".tmp"));
}

TEST_CASE("a full disk stops training with an error naming the file and the previous checkpoint intact",
          "[train][cli][checkpoint][errors]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string flags = tiny_flags + " --valid-every 100 --save-every 2 --save-every-minutes 0";
  const std::string whole = scratch.file("whole"), run = scratch.file("run");
  REQUIRE(run_agf("train --data " + data + " --out " + whole + flags + " --max-steps 8").status == 0);
  REQUIRE(run_agf("train --data " + data + " --out " + run + flags + " --max-steps 4").status == 0);
  const std::string previous = run + "/checkpoints/step_00000004.safetensors";
  const std::string previous_bytes = read_text(previous);
  const auto checkpoint_bytes = static_cast<rlim_t>(previous_bytes.size());
  REQUIRE(checkpoint_bytes > 64 * 1024);

  // Files may grow to 64 KiB: metrics.jsonl does, the checkpoint of step 6 does not.
  const auto full = run_agf_with_file_limit("train --data " + data + " --out " + run + flags +
                                                " --max-steps 8 --resume",
                                            64 * 1024, scratch.file("full.log"));
  INFO(full.output);
  CHECK(full.status == 1);
  CHECK_THAT(full.output, Catch::Contains("the checkpoint of step 6 was not written") &&
                              Catch::Contains(run + "/checkpoints/step_00000006.safetensors.tmp: write failed") &&
                              Catch::Contains("File too large") &&
                              Catch::Contains("the newest complete checkpoint is " + previous));
  CHECK(checkpoint_names(run) ==
        std::vector<std::string>{"best.safetensors", "step_00000002.safetensors", "step_00000004.safetensors"});
  CHECK(read_text(previous) == previous_bytes);
  CHECK(train_losses(run).size() == 6);  // steps 5 and 6 were logged, whole
  // Once there is room, --resume continues from step 4 exactly as if nothing had happened.
  const auto resumed = run_agf("train --data " + data + " --out " + run + flags + " --max-steps 8 --resume");
  INFO(resumed.output);
  REQUIRE(resumed.status == 0);
  CHECK(train_losses(run) == train_losses(whole));
  CHECK(agf::test::metrics_records(run, "valid").size() == 2);  // the end of the 4-step run, and step 8

  // metrics.jsonl itself past the limit: the line that does not fit is undone, the file keeps whole lines.
  const std::string small = scratch.file("small");
  const auto stopped = run_agf_with_file_limit("train --data " + data + " --out " + small + tiny_flags +
                                                   " --valid-every 100 --save-every-minutes 0 --max-steps 30",
                                               1500, scratch.file("small.log"));
  INFO(stopped.output);
  CHECK(stopped.status == 1);
  CHECK_THAT(stopped.output,
             Catch::Contains(small + "/metrics.jsonl: write failed") && Catch::Contains("File too large"));
  const std::string metrics = read_text(small + "/metrics.jsonl");
  REQUIRE_FALSE(metrics.empty());
  CHECK(metrics.back() == '\n');
  CHECK(metrics.size() <= 1500);
  CHECK_NOTHROW(agf::test::metrics_records(small, "train"));
}

TEST_CASE("a damaged newest checkpoint is refused, naming the one before to resume from",
          "[train][cli][checkpoint][errors]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string flags = tiny_flags + " --valid-every 100 --save-every 2 --max-steps 4";
  const std::string run = scratch.file("run"), checkpoints = run + "/checkpoints";
  REQUIRE(run_agf("train --data " + data + " --out " + run + flags).status == 0);
  // agf never leaves a checkpoint cut short; a disk error or a copy cut short can.
  const std::string newest = checkpoints + "/step_00000004.safetensors";
  fs::resize_file(newest, fs::file_size(newest) / 2);
  const auto refused = run_agf("train --data " + data + " --out " + run + flags + " --resume");
  INFO(refused.output);
  CHECK(refused.status == 1);
  CHECK_THAT(refused.output,
             Catch::Contains(newest + ": truncated") &&
                 Catch::Contains("move it away to resume from " + checkpoints + "/step_00000002.safetensors"));
  fs::rename(newest, scratch.file("damaged.safetensors"));
  const auto resumed = run_agf("train --data " + data + " --out " + run + flags + " --resume");
  INFO(resumed.output);
  CHECK(resumed.status == 0);
  CHECK(train_losses(run).size() == 4);
}
