// agf eval: token accuracy, loss, perplexity and BLEU of a checkpoint on a split of a prepared dataset.
#include <fmt/core.h>

#include <cmath>
#include <filesystem>

#include "data/bpe_codec.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "train/checkpoint.h"
#include "train/decode.h"
#include "train/device_flag.h"
#include "train/evaluate.h"
#include "train/sentence_scores.h"

namespace {

struct EvalFlags {
  std::string checkpoint, data, split = "valid";
  int64_t bleu_sentences = -1;  // -1: the whole split
  int beam = 1;
  uint64_t max_tokens = 4096;
  std::string device = "cpu";
  std::string sentences;               // write per-sentence scores here ("" = no)
  std::vector<int64_t> length_bounds;  // token accuracy by source length, these upper bounds
};

void run_eval(const EvalFlags& flags) {
  agf::train::length_buckets({}, flags.length_bounds);  // the bounds checked before the evaluation, not after
  const agf::Device device = agf::train::usable_device(flags.device);
  auto loaded = agf::train::load_model(flags.checkpoint);
  loaded.model->to(device);  // f32 weights, as the checkpoint stores them
  AGF_CHECK(loaded.bpe.vocab_size() > 0, "{}: the checkpoint carries no BPE model", flags.checkpoint);
  const std::string path = (std::filesystem::path(flags.data) / (flags.split + ".bin")).string();
  AGF_CHECK(std::filesystem::exists(path), "eval: {} does not exist (splits come from `agf corpus prepare`)", path);
  const auto dataset = agf::data::TokenDataset::open(path, loaded.bpe.hash());
  const agf::data::BpeCodec codec(loaded.bpe);
  agf::train::EvaluationOptions options;
  options.max_tokens = flags.max_tokens;
  options.bleu_sentences = flags.bleu_sentences < 0 ? static_cast<int64_t>(dataset.size()) : flags.bleu_sentences;
  options.decode.beam = flags.beam;
  options.per_sentence = !flags.sentences.empty() || !flags.length_bounds.empty();
  const auto result = agf::train::evaluate(*loaded.model, dataset, codec, options);
  AGF_CHECK(std::isfinite(result.loss), "eval: {}: the loss on {} is {}: the model's outputs are not finite",
            flags.checkpoint, path, result.loss);
  fmt::print("split {} ({} pairs, {} target tokens)\n", flags.split, dataset.size(), result.target_tokens);
  fmt::print("token accuracy {:.2f}%\nloss {:.4f}\nnll {:.4f}\nperplexity {:.2f}\n", result.token_accuracy, result.loss,
             result.nll, result.perplexity);
  if (result.bleu_sentences > 0) fmt::print("{} ({} sentences)\n", result.bleu.to_string(), result.bleu_sentences);
  if (!flags.length_bounds.empty()) {
    fmt::print("token accuracy by source length (BPE tokens):\n");
    for (const auto& bucket : agf::train::length_buckets(result.sentences, flags.length_bounds)) {
      const std::string range = bucket.high < 0 ? fmt::format("> {}", bucket.low - 1)
                                                : fmt::format("{}-{}", bucket.low, bucket.high);
      fmt::print("  {:>9}  {:>6} pairs  {:>8} target tokens  {}\n", range, bucket.pairs, bucket.target_tokens,
                 bucket.pairs > 0 ? fmt::format("{:.2f}%", bucket.token_accuracy()) : "-");
    }
  }
  if (!flags.sentences.empty()) {
    agf::train::write_sentence_scores(flags.sentences, result.sentences);
    fmt::print("per-sentence scores: {}\n", flags.sentences);
  }
}

const agf::cli::Registration registration{
    "eval", "Token accuracy, loss and BLEU of a checkpoint on a dataset split", [](CLI::App& command) {
      auto flags = std::make_shared<EvalFlags>();
      command.add_option("--checkpoint", flags->checkpoint, "Model checkpoint (.safetensors)")
          ->required()
          ->check(CLI::ExistingFile);
      command.add_option("--data", flags->data, "Prepared dataset folder")->required()->check(CLI::ExistingDirectory);
      command.add_option("--split", flags->split, "valid, test, or any SPLIT.bin in --data")->capture_default_str();
      command.add_option("--bleu-sentences", flags->bleu_sentences,
                         "Sentences translated for BLEU (default: all; 0: none)");
      command.add_option("--beam", flags->beam, "Beam size of the translations (1: greedy)")
          ->capture_default_str()
          ->check(agf::cli::number_between(1, agf::train::max_beam));
      command.add_option("--max-tokens", flags->max_tokens, "Padded token slots per batch")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--device", flags->device, "Where to run the model: cpu, cuda or cuda:N")
          ->capture_default_str();
      command.add_option("--sentences", flags->sentences,
                         "Also write each pair's scores to this file, one JSON line each (for `agf compare`)");
      command
          .add_option("--length-buckets", flags->length_bounds,
                      "Also print token accuracy by source length, buckets up to these bounds, e.g. 40,60,100")
          ->delimiter(',')
          ->check(agf::cli::non_negative_number());
      command.callback([flags] { run_eval(*flags); });
    }};

}  // namespace
