// Early stopping (TrainOptions::patience): a run ends after `patience` validations in a row without a lower
// validation loss, the count survives a kill (a resumed run stops at the same step as the whole one, which it
// would not if the count restarted), and a run that stopped early is finished for --resume.
//
// With a learning rate of 0 the weights never change, so every validation loss equals the first: the first
// validation sets the lowest loss and each later one adds 1 to the count.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/data/scratch_dir.h"
#include "tests/train/tiny_fixture.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace {

struct SimulatedKill {};

agf::train::TrainOptions still_options(const std::string& data, const std::string& run, int64_t patience) {
  auto options = agf::test::tiny_training(data, run, 10, 1);
  options.patience = patience;
  options.lr = 0;  // the weights stay as initialised: the validation loss never goes down
  return options;
}

}  // namespace

TEST_CASE("a run stops after `patience` validations without a lower loss, and its count survives a kill",
          "[train][early-stopping][resume]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);

  // Validations at steps 1, 2, 3: the first sets the lowest loss, the next two do not go below it.
  const std::string whole = scratch.file("whole");
  const auto summary = agf::train::train(still_options(data, whole, 2));
  CHECK(summary.stopped_early);
  CHECK(summary.steps == 3);
  CHECK(agf::test::metrics_records(whole, "valid").size() == 3);
  CHECK(summary.best_valid_loss == summary.valid_loss);
  const auto state = agf::train::load_checkpoint(agf::train::latest_checkpoint(whole)).state;
  REQUIRE(state.has_value());
  CHECK(state->validations_since_best == 2);
  REQUIRE(state->best_valid_loss.has_value());
  CHECK(*state->best_valid_loss == summary.best_valid_loss);

  SECTION("off (0), or more patience than validations: the run reaches --max-steps") {
    for (const int64_t patience : {0, 10}) {
      INFO("patience " << patience);
      const auto full = agf::train::train(
          still_options(data, scratch.file("full-" + std::to_string(patience)), patience));
      CHECK_FALSE(full.stopped_early);
      CHECK(full.steps == 10);
    }
  }
  SECTION("killed after step 2's checkpoint, the resumed run stops at step 3 too") {
    const std::string run = scratch.file("killed");
    auto killed = still_options(data, run, 2);
    int step_checkpoints = 0;
    killed.checkpoint_written = [&](const std::string& path) {
      if (std::filesystem::path(path).filename() != "best.safetensors" && ++step_checkpoints == 2)
        throw SimulatedKill{};
    };
    CHECK_THROWS_AS(agf::train::train(killed), SimulatedKill);
    auto resumed = still_options(data, run, 2);
    resumed.resume = true;
    const auto after = agf::train::train(resumed);
    CHECK(after.stopped_early);
    CHECK(after.steps == 3);
    CHECK(agf::test::metrics_records(run, "valid").size() == 3);
  }
  SECTION("a run that stopped early is finished: --resume trains nothing") {
    auto again = still_options(data, whole, 2);
    again.resume = true;
    const auto resumed = agf::train::train(again);
    CHECK(resumed.stopped_early);
    CHECK(resumed.steps == 3);
    CHECK(agf::test::metrics_records(whole, "valid").size() == 3);
    // Its best.safetensors lost, the resume validates once more to write it, without counting that again.
    std::filesystem::remove(whole + "/checkpoints/best.safetensors");
    agf::train::train(again);
    CHECK(std::filesystem::exists(whole + "/checkpoints/best.safetensors"));
    const auto after = agf::train::load_checkpoint(agf::train::latest_checkpoint(whole)).state;
    REQUIRE(after.has_value());
    CHECK(after->validations_since_best == 2);
    CHECK(agf::test::metrics_records(whole, "valid").size() == 3);
  }
}
