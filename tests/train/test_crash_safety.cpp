// Crash safety: files that a kill or a full disk never leaves half-written, and metrics.jsonl of whole lines.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/data/scratch_dir.h"
#include "train/atomic_file.h"
#include "train/metrics_log.h"

namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

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
    return nlohmann::json{{"step", step}, {"split", "train"}, {"note", std::string(static_cast<std::size_t>(step * 37 % 300), 'x')}};
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
  for (std::string line; std::getline(in, line);) steps.push_back(nlohmann::json::parse(line).at("step").get<int64_t>());
  REQUIRE(steps.size() == 151);
  CHECK(steps.front() == 1);
  CHECK(steps[149] == 150);
  CHECK(steps.back() == 151);
  CHECK_FALSE(fs::exists(path + ".tmp"));
}
