// agf grad: the loss and every parameter's gradient for one batch made of given lines, dropout off —
// for comparing agf with another implementation (tools/bench/torch_peer.py grad) number by number.
// Under mpirun it computes them as a distributed training step does (docs/distributed.md): each process
// its shard of the lines, weighted by its share of the target tokens, the gradients summed over the
// processes (train/gradient_sum.h); rank 0 writes them. With --dtype f64 the result is the single-process
// one up to rounding: the test of the data-parallel sum.
#include <fmt/core.h>

#include <algorithm>
#include <span>

#include "autograd/functions.h"
#include "data/batch_shard.h"
#include "data/bpe_codec.h"
#include "data/text_file.h"
#include "data/utf8.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "train/batch.h"
#include "train/checkpoint.h"
#include "train/distributed.h"
#include "train/gradient_sum.h"

namespace {

struct GradFlags {
  std::string checkpoint, src, tgt, out, save_batch, dtype = "f64";
  double label_smoothing = 0.1;
};

std::vector<std::vector<int32_t>> encode_file(const agf::data::BpeCodec& codec, const std::string& path) {
  std::vector<std::vector<int32_t>> rows;
  const std::vector<std::string> lines = agf::data::read_lines(path);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto invalid = agf::data::find_invalid_utf8(lines[i]);
    AGF_CHECK(!invalid, "{}:{}: invalid UTF-8 at byte {}", path, i + 1, invalid.value_or(0));
    rows.push_back(codec.encode(lines[i]));
  }
  return rows;
}

void run_grad(const GradFlags& flags) {
  auto loaded = agf::train::load_model(flags.checkpoint, agf::parse_dtype(flags.dtype));
  AGF_CHECK(loaded.bpe.vocab_size() > 0, "{}: the checkpoint carries no BPE model", flags.checkpoint);
  const agf::data::BpeCodec codec(loaded.bpe);
  const auto sources = encode_file(codec, flags.src);
  const auto targets = encode_file(codec, flags.tgt);
  AGF_CHECK(sources.size() == targets.size(), "grad: {} has {} lines but {} has {}", flags.src, sources.size(),
            flags.tgt, targets.size());
  AGF_CHECK(!sources.empty(), "grad: {} is empty", flags.src);
  agf::train::World& processes = agf::train::world();
  // This process's rows: all of them, or its shard (as the trainer takes one of a batch).
  std::vector<uint32_t> lengths;
  int64_t all_targets = 0;
  for (std::size_t row = 0; row < sources.size(); ++row) {
    lengths.push_back(static_cast<uint32_t>(std::max(sources[row].size(), targets[row].size()) + 1));
    all_targets += static_cast<int64_t>(targets[row].size()) + 1;  // + eos
  }
  const auto [begin, end] = agf::data::batch_shard(lengths, processes.rank(), processes.size());
  auto& model = *loaded.model;
  model.eval();  // dropout off; gradients are still recorded
  double loss_value = 0;
  agf::Tensor loss_tensor;
  if (begin < end) {
    const agf::train::Batch batch = agf::train::make_batch({sources.begin() + begin, sources.begin() + end},
                                                           {targets.begin() + begin, targets.begin() + end});
    agf::nn::DropoutStream dropout;
    const agf::Variable logits = model.forward(batch.encoder_input, batch.source_lengths, batch.decoder_input, dropout);
    const agf::Variable loss = agf::cross_entropy(
        agf::reshape(logits, {-1, logits.size(-1)}), batch.decoder_target.reshape({-1}),
        {.label_smoothing = flags.label_smoothing, .ignore_index = agf::data::pad_id});
    // The mean over this shard's target tokens, weighted by their share of all: the shards' sum is the whole mean.
    const double share = static_cast<double>(batch.target_tokens) / static_cast<double>(all_targets);
    if (processes.size() == 1) {
      loss.backward();
    } else {
      (loss * share).backward();
    }
    loss_tensor = loss.data();
    loss_value = loss.item() * share;
  }
  agf::train::sum_gradients(processes, model.named_parameters());
  processes.sum(std::span(&loss_value, 1));
  if (processes.size() > 1)
    loss_tensor = agf::Tensor::scalar(loss_value, model.named_parameters().front().second.dtype());
  if (!processes.is_root()) return;  // rank 0 writes the world's gradients
  const agf::train::Batch batch = agf::train::make_batch(sources, targets);
  std::vector<std::pair<std::string, agf::Tensor>> tensors{{"loss", loss_tensor}};
  for (const auto& [name, parameter] : model.named_parameters()) {
    tensors.emplace_back(name, parameter.grad().defined() ? parameter.grad()
                                                          : agf::Tensor::zeros(parameter.shape(), parameter.dtype()));
  }
  agf::train::save_safetensors(flags.out, tensors, {{"agf.checkpoint", flags.checkpoint}});
  if (!flags.save_batch.empty()) {
    agf::train::save_safetensors(flags.save_batch, {{"encoder_input", batch.encoder_input},
                                                    {"decoder_input", batch.decoder_input},
                                                    {"decoder_target", batch.decoder_target}});
  }
  fmt::print("loss {:.10f} over {} target tokens; {} gradients written to {}{}\n", loss_tensor.item(),
             batch.target_tokens, tensors.size() - 1, flags.out,
             processes.size() > 1 ? fmt::format(" (summed over {} processes)", processes.size()) : "");
}

const agf::cli::Registration registration{
    "grad", "Loss and every parameter gradient for one batch, to safetensors", [](CLI::App& command) {
      auto flags = std::make_shared<GradFlags>();
      command.add_option("--checkpoint", flags->checkpoint, "Model checkpoint")->required()->check(CLI::ExistingFile);
      command.add_option("--src", flags->src, "Source lines (one sentence per line)")
          ->required()
          ->check(CLI::ExistingFile);
      command.add_option("--tgt", flags->tgt, "Target lines")->required()->check(CLI::ExistingFile);
      command.add_option("--out", flags->out, "Output .safetensors: `loss` and the gradients under parameter names")
          ->required();
      command.add_option("--save-batch", flags->save_batch,
                         "Also write the batch (encoder_input, decoder_input, decoder_target)");
      command.add_option("--dtype", flags->dtype, "Compute in f64 or f32")->capture_default_str();
      command.add_option("--label-smoothing", flags->label_smoothing, "ε of the loss")
          ->capture_default_str()
          ->check(agf::cli::number_between(0.0, 1.0));
      command.callback([flags] { run_grad(*flags); });
    }};

}  // namespace
