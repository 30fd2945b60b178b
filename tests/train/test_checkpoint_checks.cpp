// What a checkpoint must hold before agf uses it: metadata that parses (named by key when it does not),
// config sizes within bounds, and finite weights. And `agf eval` refuses a split with nothing in it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

#include "data/bpe_model.h"
#include "data/token_dataset.h"
#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/checkpoint.h"
#include "train/safetensors.h"

namespace {

// A tiny agf-m checkpoint from `agf init`, with the training state of step 0 added to its metadata.
std::string training_checkpoint(const agf::test::ScratchDir& scratch) {
  const std::string& fixture = agf::test::tiny_fixture;
  const std::string bpe = scratch.file("bpe.json"), checkpoint = scratch.file("init.safetensors");
  REQUIRE(
      run_agf("bpe learn --input " + fixture + "/train.en " + fixture + "/train.de --vocab-size 400 --output " + bpe)
          .status == 0);
  REQUIRE(run_agf("init --preset tiny --pos agf-m --vocab " + bpe + " --out " + checkpoint).status == 0);
  auto file = agf::train::load_safetensors(checkpoint);
  file.metadata.merge(agf::train::TrainingState{}.to_metadata());
  agf::train::save_safetensors(checkpoint, file.tensors, file.metadata);
  return checkpoint;
}

// A copy of `checkpoint` named `name` with one metadata entry changed (`value` nullopt: removed).
std::string with_metadata(const agf::test::ScratchDir& scratch, const std::string& checkpoint, const std::string& name,
                          const std::string& key, std::optional<std::string> value) {
  auto file = agf::train::load_safetensors(checkpoint);
  if (value) file.metadata[key] = *value;
  else file.metadata.erase(key);
  const std::string path = scratch.file(name);
  agf::train::save_safetensors(path, file.tensors, file.metadata);
  return path;
}

}  // namespace

TEST_CASE("missing or malformed checkpoint metadata is an error naming the file and the key",
          "[train][checkpoint][errors]") {
  agf::test::ScratchDir scratch;
  const std::string checkpoint = training_checkpoint(scratch);
  REQUIRE(agf::train::load_checkpoint(checkpoint).state.has_value());
  struct Case {
    std::string key;
    std::optional<std::string> value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"agf.state.best_valid_accuracy", std::nullopt, "lacks 'agf.state.best_valid_accuracy'"},
      {"agf.state.elapsed_seconds", "soon", "'agf.state.elapsed_seconds' is not a finite number: 'soon'"},
      {"agf.state.elapsed_seconds", "nan", "'agf.state.elapsed_seconds' is not a finite number: 'nan'"},
      {"agf.state.best_valid_accuracy", "1e999", "'agf.state.best_valid_accuracy' is not a finite number"},
      {"agf.state.step", "-5", "'agf.state.step' is not a whole number >= 0: '-5'"},
      {"agf.state.epoch", "-5", "'agf.state.epoch' is not a whole number >= 0: '-5'"},
      {"agf.state.batch", "12abc", "'agf.state.batch' is not a whole number >= 0: '12abc'"},
      {"agf.state.target_tokens", "99999999999999999999999", "'agf.state.target_tokens' is not a whole number"},
      {"agf.config.encoder_layers", "1e8", "'agf.config.encoder_layers' is not an integer: '1e8'"},
      {"agf.config.encoder_layers", "100000000", "encoder_layers 100000000 is above agf's limit of 1024"},
      {"agf.config.d_model", "1048576", "d_model 1048576 is above agf's limit"},
      {"agf.config.d_model", "65536", "parameters, above agf's limit"},
      {"agf.config.k", "inf", "'agf.config.k' is not a finite number: 'inf'"},
      {"agf.state.world_size", "0", "'agf.state.world_size' must be at least 1, got 0"},
      {"agf.state.world_size", "2", "lacks 'agf.state.dropout_offsets'"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    INFO(c.key << " = " << c.value.value_or("(removed)"));
    const std::string edited = with_metadata(scratch, checkpoint, "edited" + std::to_string(i) + ".safetensors", c.key,
                                             c.value);
    CHECK_THROWS_WITH(agf::train::load_checkpoint(edited), Catch::Contains(edited) && Catch::Contains(c.expected));
  }
  // Through the program: exit 1, not an unexpected error.
  const std::string edited = with_metadata(scratch, checkpoint, "cli.safetensors", "agf.state.elapsed_seconds", "soon");
  const auto translated = run_agf("translate --checkpoint " + edited + " < /dev/null");
  CHECK(translated.status == 1);
  CHECK_THAT(translated.output, Catch::Contains("cli.safetensors") && Catch::Contains("agf.state.elapsed_seconds"));
}

TEST_CASE("a checkpoint with non-finite weights is refused, naming the tensor", "[train][checkpoint][errors]") {
  agf::test::ScratchDir scratch;
  const std::string checkpoint = training_checkpoint(scratch);
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    auto file = agf::train::load_safetensors(checkpoint);
    auto& [name, tensor] = *std::max_element(file.tensors.begin(), file.tensors.end(),
                                             [](const auto& a, const auto& b) {
                                               return a.second.numel() < b.second.numel();
                                             });
    std::vector<double> values = tensor.to_double_vector();
    values[3] = bad;
    tensor = agf::Tensor::from_vector(values, tensor.shape()).to(tensor.dtype());
    const std::string diverged = scratch.file("diverged.safetensors");
    agf::train::save_safetensors(diverged, file.tensors, file.metadata);
    const auto evaluated = run_agf("eval --checkpoint " + diverged + " --data " + scratch.path().string());
    INFO(evaluated.output);
    CHECK(evaluated.status == 1);
    CHECK_THAT(evaluated.output, Catch::Contains("diverged.safetensors") && Catch::Contains("tensor '" + name + "'") &&
                                     Catch::Contains("at element 3") && Catch::Contains("not finite"));
  }
}

TEST_CASE("agf eval refuses an empty split instead of reporting 0% accuracy", "[train][cli][errors]") {
  agf::test::ScratchDir scratch;
  const std::string checkpoint = training_checkpoint(scratch);
  const auto bpe = agf::data::BpeModel::load(scratch.file("bpe.json"));
  agf::data::write_token_dataset(scratch.file("empty.bin"), {}, bpe.hash(), bpe.vocab_size());
  const auto evaluated = run_agf("eval --checkpoint " + checkpoint + " --data " + scratch.path().string() +
                                 " --split empty");
  INFO(evaluated.output);
  CHECK(evaluated.status == 1);
  CHECK_THAT(evaluated.output, Catch::Contains("empty.bin holds no pairs"));
  CHECK_THAT(evaluated.output, !Catch::Contains("accuracy"));
}

TEST_CASE("a distributed run's checkpoint holds each process's dropout stream offset",
          "[train][checkpoint][distributed]") {
  agf::test::ScratchDir scratch;
  const std::string checkpoint = training_checkpoint(scratch);
  // A single process's checkpoint, and one of a version before distributed training (no world size): a world of 1.
  CHECK(agf::train::load_checkpoint(checkpoint).state->world_size == 1);
  const std::string older = with_metadata(scratch, checkpoint, "older.safetensors", "agf.state.world_size",
                                          std::nullopt);
  CHECK(agf::train::load_checkpoint(older).state->world_size == 1);
  // Three processes: three offsets, read back as written.
  auto file = agf::train::load_safetensors(checkpoint);
  agf::train::TrainingState state;
  state.world_size = 3;
  state.dropout_offsets = {7, 0, 18446744073709551615ULL};
  for (auto& [key, value] : state.to_metadata()) file.metadata[key] = value;
  const std::string three = scratch.file("three.safetensors");
  agf::train::save_safetensors(three, file.tensors, file.metadata);
  const auto loaded = agf::train::load_checkpoint(three);
  CHECK(loaded.state->world_size == 3);
  CHECK(loaded.state->dropout_offsets == state.dropout_offsets);
  for (const char* bad : {"7,0", "7,,1", "7,0,1,2", "7,0,x"}) {
    INFO(bad);
    const std::string edited = with_metadata(scratch, three, "bad.safetensors", "agf.state.dropout_offsets", bad);
    CHECK_THROWS_WITH(agf::train::load_checkpoint(edited), Catch::Contains("'agf.state.dropout_offsets'"));
  }
  state.dropout_offsets = {1, 2};
  CHECK_THROWS_WITH(state.to_metadata(), Catch::Contains("2 dropout stream offsets for a world of 3"));
  // What rank 0 sends the other processes: the file's bytes, read as the file is.
  std::ifstream in(three, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const auto received = agf::train::load_checkpoint_bytes(bytes, three);
  CHECK(received.state->dropout_offsets == loaded.state->dropout_offsets);
  REQUIRE(received.file.tensors.size() == loaded.file.tensors.size());
  for (std::size_t i = 0; i < received.file.tensors.size(); ++i) {
    CHECK(received.file.tensors[i].second.to_double_vector() == loaded.file.tensors[i].second.to_double_vector());
  }
  CHECK_THROWS_WITH(agf::train::load_checkpoint_bytes(bytes.substr(0, bytes.size() - 4), three),
                    Catch::Contains(three) && Catch::Contains("truncated"));
}
