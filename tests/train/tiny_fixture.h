#pragma once
// The 20-pair en-de fixture as a prepared dataset, for the tests that train on it end to end.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "train/trainer.h"

namespace agf::test {

inline const std::string tiny_fixture = std::string(AGF_SOURCE_DIR) + "/tests/fixtures/tiny-en-de";

// BPE (400 tokens) + `agf corpus prepare` of the fixture, train = valid (the overfitting set), in
// `scratch`; returns the prepared dataset's folder.
inline std::string prepare_tiny_fixture(const ScratchDir& scratch) {
  const std::string& fixture = tiny_fixture;
  const std::string bpe = scratch.file("bpe.json");
  REQUIRE(
      run_agf("bpe learn --input " + fixture + "/train.en " + fixture + "/train.de --vocab-size 400 --output " + bpe)
          .status == 0);
  const std::string data = scratch.file("data");
  REQUIRE(run_agf("corpus prepare --train-src " + fixture + "/train.en --train-tgt " + fixture +
                  "/train.de --valid-src " + fixture + "/train.en --valid-tgt " + fixture + "/train.de --bpe " + bpe +
                  " --out " + data)
              .status == 0);
  return data;
}

// A short run of the tiny preset (agf-m) on a prepared fixture into `run`: `steps` updates, validating every
// `valid_every`, lr 3e-3 with a warmup of 1, no BLEU, quiet. Tests change what they are about.
inline agf::train::TrainOptions tiny_training(const std::string& data, const std::string& run, int64_t steps,
                                              int64_t valid_every) {
  agf::train::TrainOptions options;
  options.data_dir = data;
  options.out_dir = run;
  options.model = agf::nn::TransformerConfig::from_preset("tiny");
  options.max_steps = steps;
  options.valid_every = valid_every;
  options.lr = 3e-3;
  options.warmup = 1;
  options.bleu_sentences = 0;
  options.quiet = true;
  return options;
}

// The records of RUN/metrics.jsonl whose "split" is `split` ("train" or "valid"), in file order.
inline std::vector<nlohmann::json> metrics_records(const std::string& run, const std::string& split) {
  std::vector<nlohmann::json> records;
  std::ifstream in(run + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line);
    if (record.at("split") == split) records.push_back(std::move(record));
  }
  return records;
}

// step -> loss of the training lines of RUN/metrics.jsonl
inline std::map<int64_t, double> train_losses(const std::string& run) {
  std::map<int64_t, double> losses;
  for (const auto& record : metrics_records(run, "train"))
    losses[record.at("step").get<int64_t>()] = record.at("loss").get<double>();
  return losses;
}

}  // namespace agf::test
