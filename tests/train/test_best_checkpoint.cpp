// best.safetensors survives a kill at any checkpoint write: after the resumed run it exists, loads, and
// holds the best accuracy that the run's latest step checkpoint records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace fs = std::filesystem;

namespace {

// Thrown from TrainOptions::checkpoint_written: train() stops right after that file is in place. Every
// checkpoint is written by an atomic rename, so the files left are those a SIGKILL at that moment leaves.
struct SimulatedKill {};

agf::train::TrainOptions tiny_options(const std::string& data, const std::string& run) {
  agf::train::TrainOptions options;
  options.data_dir = data;
  options.out_dir = run;
  options.model = agf::nn::TransformerConfig::from_preset("tiny");
  options.model.pos = "agf-m";
  options.max_steps = 6;
  options.valid_every = 3;
  options.lr = 3e-3;
  options.warmup = 1;
  options.label_smoothing = 0;
  options.bleu_sentences = 0;
  options.quiet = true;
  return options;
}

double recorded_best(const std::string& checkpoint) {
  const auto loaded = agf::train::load_checkpoint(checkpoint);
  REQUIRE(loaded.state.has_value());
  return loaded.state->best_valid_accuracy;
}

}  // namespace

TEST_CASE("a kill between any two checkpoint writes leaves best.safetensors after --resume", "[train][resume][best]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  // The uninterrupted run: how many writes there are to be killed after, and the precondition that both
  // validations improve, so that best.safetensors is written twice and a stale one would be caught.
  std::vector<std::string> writes;
  auto whole = tiny_options(data, scratch.file("whole"));
  whole.checkpoint_written = [&](const std::string& path) { writes.push_back(fs::path(path).filename().string()); };
  agf::train::train(whole);
  REQUIRE(writes.size() == 4);
  REQUIRE(std::count(writes.begin(), writes.end(), "best.safetensors") == 2);

  for (std::size_t kill_after = 1; kill_after <= writes.size(); ++kill_after) {
    INFO("killed after write " << kill_after << " (" << writes[kill_after - 1] << ")");
    const std::string run = scratch.file("killed-" + std::to_string(kill_after));
    auto killed = tiny_options(data, run);
    std::size_t written = 0;
    killed.checkpoint_written = [&](const std::string&) {
      if (++written == kill_after) throw SimulatedKill{};
    };
    CHECK_THROWS_AS(agf::train::train(killed), SimulatedKill);
    auto resumed = tiny_options(data, run);
    resumed.resume = true;
    agf::train::train(resumed);
    const std::string best = run + "/checkpoints/best.safetensors";
    REQUIRE(fs::exists(best));
    const auto loaded = agf::train::load_model(best);
    CHECK(loaded.bpe.vocab_size() == 400);
    CHECK(recorded_best(best) == recorded_best(agf::train::latest_checkpoint(run)));
    CHECK(recorded_best(best) == recorded_best(scratch.file("whole") + "/checkpoints/best.safetensors"));
  }
}

TEST_CASE("resuming rewrites a missing best.safetensors and removes partial writes", "[train][cli][resume][best]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string run = scratch.file("run"), checkpoints = run + "/checkpoints";
  const std::string flags = " --preset tiny --pos agf-m --lr 3e-3 --warmup 1 --bleu-sentences 0 --quiet --threads 1 "
                            "--valid-every 3";
  REQUIRE(run_agf("train --data " + data + " --out " + run + flags + " --max-steps 6").status == 0);
  // As runs of earlier versions could be left: the step checkpoint records a best, best.safetensors is gone,
  // and a write killed midway left its temporary file.
  fs::remove(checkpoints + "/best.safetensors");
  std::ofstream(checkpoints + "/best.safetensors.tmp") << "half a file";
  // The run is finished: resuming it evaluates the final weights once more to write best.safetensors.
  const auto finished = run_agf("train --data " + data + " --out " + run + flags + " --max-steps 6 --resume");
  INFO(finished.output);
  REQUIRE(finished.status == 0);
  CHECK_THAT(finished.output, Catch::Contains("best.safetensors is missing"));
  CHECK(fs::exists(checkpoints + "/best.safetensors"));
  CHECK_FALSE(fs::exists(checkpoints + "/best.safetensors.tmp"));
  CHECK(recorded_best(checkpoints + "/best.safetensors") == recorded_best(checkpoints + "/step_00000006.safetensors"));
  CHECK(agf::test::metrics_records(run, "valid").size() == 2);  // the repeated validation is not logged twice
  // A run that goes on writes it at its next validation.
  fs::remove(checkpoints + "/best.safetensors");
  const auto extended = run_agf("train --data " + data + " --out " + run + flags + " --resume --max-steps 9");
  INFO(extended.output);
  REQUIRE(extended.status == 0);
  CHECK_THAT(extended.output, Catch::Contains("best.safetensors is missing"));
  REQUIRE(fs::exists(checkpoints + "/best.safetensors"));
  CHECK(agf::train::load_checkpoint(checkpoints + "/best.safetensors").state->step == 9);
}
