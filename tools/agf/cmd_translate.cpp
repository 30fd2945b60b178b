// agf translate: source sentences on stdin, translations on stdout, one per line.
#include <fmt/core.h>

#include <iostream>

#include "data/bpe_codec.h"
#include "data/utf8.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "train/checkpoint.h"
#include "train/decode.h"
#include "train/device_flag.h"

namespace {

struct TranslateFlags {
  std::string checkpoint;
  agf::train::DecodeOptions decode;
  std::size_t batch = 32;
  std::string device = "cpu";
};

void run_translate(const TranslateFlags& flags) {
  const agf::Device device = agf::train::usable_device(flags.device);
  auto loaded = agf::train::load_model(flags.checkpoint);
  loaded.model->to(device);  // f32 weights, as the checkpoint stores them
  AGF_CHECK(loaded.bpe.vocab_size() > 0, "{}: the checkpoint carries no BPE model", flags.checkpoint);
  const agf::data::BpeCodec codec(loaded.bpe);
  std::vector<std::string> lines;
  auto flush = [&] {
    std::vector<std::vector<int32_t>> sources;
    for (const auto& line : lines) sources.push_back(codec.encode(line));
    for (const auto& ids : agf::train::translate(*loaded.model, sources, flags.decode)) {
      fmt::print("{}\n", codec.decode(ids));
    }
    std::fflush(stdout);
    lines.clear();
  };
  std::size_t line_number = 0;
  for (std::string line; std::getline(std::cin, line);) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto invalid = agf::data::find_invalid_utf8(line);
    AGF_CHECK(!invalid.has_value(), "stdin:{}: invalid UTF-8 at byte {}", line_number, invalid.value_or(0));
    lines.push_back(line);
    if (lines.size() == flags.batch) flush();
  }
  if (!lines.empty()) flush();
}

const agf::cli::Registration registration{
    "translate", "Translate stdin to stdout (greedy or beam search)", [](CLI::App& command) {
      auto flags = std::make_shared<TranslateFlags>();
      command.add_option("--checkpoint", flags->checkpoint, "Model checkpoint (.safetensors)")
          ->required()
          ->check(CLI::ExistingFile);
      command.add_option("--beam", flags->decode.beam, "Beam size (1: greedy)")
          ->capture_default_str()
          ->check(agf::cli::number_between(1, agf::train::max_beam));
      command.add_option("--length-penalty", flags->decode.length_penalty, "Beam: rank by log-probability / length^α")
          ->capture_default_str()
          ->check(agf::cli::finite_number());
      command.add_option("--batch", flags->batch, "Sentences decoded together")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--device", flags->device, "Where to run the model: cpu, cuda or cuda:N")
          ->capture_default_str();
      command.callback([flags] { run_translate(*flags); });
    }};

}  // namespace
