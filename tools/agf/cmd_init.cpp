// agf init: a freshly initialised checkpoint for a preset and scheme, with the BPE model inside.
#include <fmt/core.h>

#include "data/bpe_model.h"
#include "nn/transformer.h"
#include "tools/agf/command.h"
#include "tools/agf/model_flags.h"
#include "train/checkpoint.h"

namespace {

struct InitFlags {
  agf::cli::ModelFlags model;
  std::string vocab, out;
  uint64_t seed = 1;
};

const agf::cli::Registration registration{
    "init", "Write a freshly initialised model checkpoint", [](CLI::App& command) {
      auto flags = std::make_shared<InitFlags>();
      flags->model.add_to(command);
      command.add_option("--vocab", flags->vocab, "BPE model (agf bpe learn --output)")
          ->required()
          ->check(CLI::ExistingFile);
      command.add_option("--out", flags->out, "Output checkpoint (.safetensors)")->required();
      command.add_option("--seed", flags->seed, "Seed of the parameters")->capture_default_str();
      command.callback([flags] {
        const agf::data::BpeModel bpe = agf::data::BpeModel::load(flags->vocab);
        const auto config = flags->model.config(static_cast<int64_t>(bpe.vocab_size()));
        const agf::nn::Transformer model(config, flags->seed);
        agf::train::save_checkpoint(flags->out, model, config, bpe.to_json(), nullptr, nullptr);
        fmt::print("{} {} with {} parameters written to {}\n", config.preset, config.scheme_label(),
                   model.parameter_count(), flags->out);
      });
    }};

}  // namespace
