// The paper grid's runner (train/experiment.h) reuses a finished run only when its recorded budget equals
// the grid's: same budget, the run is read back and not trained again; another budget (or none recorded, as
// older summaries have) is an error that names the run and what differs, never a silent mix of budgets. A
// run's record (in a results folder of its own when given) is enough to reuse it, and a run killed during
// its evaluation is evaluated again, not trained again.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "data/text_file.h"
#include "tests/data/scratch_dir.h"
#include "tests/train/tiny_fixture.h"
#include "train/experiment.h"
#include "train/experiment_report.h"
#include "train/sentence_scores.h"

namespace fs = std::filesystem;

namespace {

agf::train::ExperimentOptions tiny_grid(const std::string& data, const std::string& out) {
  agf::train::ExperimentOptions options;
  options.schemes = {"agf-m"};
  options.seeds = 1;
  options.best_count = 0;
  options.base = agf::test::tiny_training(data, out, 2, 1);
  return options;
}

std::string contents(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("the grid reuses a finished run only when its budget matches", "[train][experiment]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string out = scratch.file("grid");
  const fs::path run = fs::path(out) / "runs" / "agf-m" / "seed1";
  agf::train::run_experiment(tiny_grid(data, out));
  REQUIRE(fs::exists(run / "summary.json"));
  const auto summary = nlohmann::json::parse(contents(run / "summary.json"));
  REQUIRE(summary.contains("budget"));
  CHECK(summary.at("budget").at("max_steps") == 2);
  CHECK(summary.at("budget").at("model").at("agf.config.pos") == "agf-m");
  const std::string metrics = contents(run / "metrics.jsonl");

  SECTION("the same budget: read back, not trained again") {
    const std::string results = agf::train::run_experiment(tiny_grid(data, out));
    CHECK(contents(run / "metrics.jsonl") == metrics);
    CHECK(results.find("| agf-m | 1 |") != std::string::npos);
  }
  SECTION("another budget: an error naming the run and the difference") {
    auto longer = tiny_grid(data, out);
    longer.base.max_steps = 3;
    CHECK_THROWS_WITH(agf::train::run_experiment(longer),
                      Catch::Contains(run.string()) && Catch::Contains("max_steps: 2 there, 3 here"));
    auto other_model = tiny_grid(data, out);
    other_model.base.model.dropout = 0.3;
    CHECK_THROWS_WITH(agf::train::run_experiment(other_model), Catch::Contains("agf.config.dropout"));
    CHECK(contents(run / "metrics.jsonl") == metrics);  // nothing was retrained over it
  }
  SECTION("an interrupted run resumes only under the budget it began with") {
    const std::string other = scratch.file("interrupted");
    const fs::path begun = fs::path(other) / "runs" / "agf-m" / "seed1";
    auto first = tiny_grid(data, other);
    first.base.max_steps = 3;
    first.base.checkpoint_written = [](const std::string& path) {
      if (fs::path(path).filename() != "best.safetensors") throw std::runtime_error("simulated kill");
    };
    CHECK_THROWS_WITH(agf::train::run_experiment(first), "simulated kill");
    REQUIRE(fs::exists(begun / "budget.json"));
    REQUIRE_FALSE(fs::exists(begun / "summary.json"));
    auto changed = tiny_grid(data, other);
    changed.base.max_steps = 3;
    changed.base.lr = 1e-3;
    CHECK_THROWS_WITH(agf::train::run_experiment(changed), Catch::Contains(begun.string()) &&
                                                               Catch::Contains("was begun with another budget") &&
                                                               Catch::Contains("lr: 0.003 there, 0.001 here"));
    auto same = tiny_grid(data, other);
    same.base.max_steps = 3;
    agf::train::run_experiment(same);
    CHECK(fs::exists(begun / "summary.json"));
    CHECK(agf::test::metrics_records(begun.string(), "train").size() == 3);
  }
  SECTION("the record: the best checkpoint's metrics and per-sentence scores of each split") {
    CHECK(summary.at("budget").at("evaluation").at("beam") == 4);
    CHECK(summary.at("budget").at("evaluation").at("splits") == nlohmann::json::array({"valid"}));
    const auto& valid = summary.at("splits").at("valid");
    CHECK(valid.at("sentences") == 20);  // the whole split translated
    CHECK(valid.at("token_accuracy").get<double>() >= 0);
    CHECK(agf::train::read_sentence_scores((run / "valid.sentences.jsonl.xz").string()).size() == 20);
    CHECK(agf::data::read_file((run / "metrics.jsonl.xz").string()) == metrics);
    CHECK(summary.at("machine").contains("cpu"));
  }
  SECTION("a budget recorded before the learning-rate schedule was: the inverse-sqrt it had") {
    auto older = summary;
    older.at("budget").erase("lr_schedule");
    std::ofstream(run / "summary.json") << older.dump(2) << "\n";
    CHECK(agf::train::run_experiment(tiny_grid(data, out)).find("| agf-m | 1 |") != std::string::npos);
    CHECK(contents(run / "metrics.jsonl") == metrics);  // reused, not trained again
    auto linear = tiny_grid(data, out);
    linear.base.lr_schedule = agf::train::LrSchedule::linear;
    CHECK_THROWS_WITH(agf::train::run_experiment(linear),
                      Catch::Contains("lr_schedule: absent there, \"linear\" here"));
  }
  SECTION("a summary without a budget (an older agf's): an error, not a reuse") {
    auto old_summary = summary;
    old_summary.erase("budget");
    std::ofstream(run / "summary.json") << old_summary.dump(2) << "\n";
    CHECK_THROWS_WITH(agf::train::run_experiment(tiny_grid(data, out)),
                      Catch::Contains("without a recorded budget") && Catch::Contains(run.string()));
  }
}

TEST_CASE("a results folder keeps each run's record; the record alone is enough to reuse the run",
          "[train][experiment]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  auto grid = tiny_grid(data, scratch.file("work"));
  grid.results_dir = scratch.file("results");
  const fs::path record = fs::path(grid.results_dir) / "agf-m" / "seed1";
  const fs::path work = fs::path(grid.base.out_dir) / "runs" / "agf-m" / "seed1";
  const std::string first = agf::train::run_experiment(grid);
  for (const char* file : {"summary.json", "metrics.jsonl.xz", "valid.sentences.jsonl.xz"}) {
    CHECK(fs::exists(record / file));
    CHECK_FALSE(fs::exists(work / file));
  }
  CHECK(fs::exists(fs::path(grid.results_dir) / "results.md"));
  CHECK(fs::exists(fs::path(grid.results_dir) / "curves.svg"));
  CHECK_THAT(first, Catch::Contains("Training pairs have at most 250 BPE tokens a side"));  // prepare.json's
  fs::remove_all(grid.base.out_dir);  // a new checkout: the work folder is gone, the committed record is not
  CHECK(agf::train::run_experiment(grid) == first);
  CHECK_FALSE(fs::exists(work));  // read back, not trained again
}

TEST_CASE("a run killed during its evaluation is evaluated again, not trained again", "[train][experiment]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  auto grid = tiny_grid(data, scratch.file("work"));
  grid.results_dir = scratch.file("results");
  const fs::path work = fs::path(grid.base.out_dir) / "runs" / "agf-m" / "seed1";
  const fs::path record = fs::path(grid.results_dir) / "agf-m" / "seed1";
  agf::train::run_experiment(grid);
  const std::string metrics = contents(work / "metrics.jsonl");
  fs::remove(record / "summary.json");  // as a kill after training, before the record was complete
  fs::remove(record / "valid.sentences.jsonl.xz");
  agf::train::run_experiment(grid);
  CHECK(contents(work / "metrics.jsonl") == metrics);
  CHECK(fs::exists(record / "summary.json"));
  CHECK(fs::exists(record / "valid.sentences.jsonl.xz"));
}

TEST_CASE("the grid runs seed by seed across the schemes, so a grid stopped part-way has every row",
          "[train][experiment]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  auto grid = tiny_grid(data, scratch.file("work"));
  grid.schemes = {"agf-b", "agf-m"};
  grid.seeds = 2;
  std::vector<std::string> order;  // each run's work folder (LABEL/seedN), in the order the runs trained
  grid.base.checkpoint_written = [&](const std::string& path) {
    const fs::path run = fs::path(path).parent_path().parent_path();
    const std::string name = run.parent_path().filename().string() + "/" + run.filename().string();
    if (order.empty() || order.back() != name) order.push_back(name);
  };
  agf::train::run_experiment(grid);
  CHECK(order == std::vector<std::string>{"agf-b/seed1", "agf-m/seed1", "agf-b/seed2", "agf-m/seed2"});
}

TEST_CASE("extra seeds for the best schemes are off by default, and go by validation accuracy when asked",
          "[train][experiment]") {
  CHECK(agf::train::ExperimentOptions{}.best_count == 0);
  agf::train::GridReport report;
  report.labels = {"vanilla", "agf-b", "alibi"};
  // agf-b leads on validation, vanilla on test: the test split must not choose.
  for (const auto& [label, valid, test] :
       {std::tuple{"vanilla", 50.0, 70.0}, {"agf-b", 60.0, 40.0}, {"alibi", 55.0, 55.0}}) {
    agf::train::GridRun run;
    run.splits["valid"].token_accuracy = valid;
    run.splits["test"].token_accuracy = test;
    report.runs[label] = {run, run};
  }
  CHECK(agf::train::best_schemes(report, 2) == std::vector<std::string>{"agf-b", "alibi"});
  CHECK(agf::train::best_schemes(report, 5).size() == 3);
  report.runs["alibi"].front().splits["valid"].token_accuracy = 65.0;  // mean 60: level with agf-b, later
  CHECK(agf::train::best_schemes(report, 1) == std::vector<std::string>{"agf-b"});
}
