// agf bench train: target tokens per second of full training steps (forward, backward, Adam) on a
// synthetic batch of 64 sentences × 24 tokens each side with an 8,000-token vocabulary, per scheme —
// the same workload as tools/bench/torch_peer.py bench, so the two can be compared in one run.
#include <fmt/core.h>
#include <omp.h>

#include <chrono>

#include "autograd/functions.h"
#include "core/philox.h"
#include "data/bpe_model.h"
#include "nn/transformer.h"
#include "tools/agf/bench_timing.h"
#include "tools/agf/command.h"
#include "tools/agf/model_flags.h"
#include "train/adam.h"

namespace {

struct BenchTrainFlags {
  agf::cli::ModelFlags model;
  std::vector<std::string> schemes;
  int64_t batch = 64, length = 24, vocabulary = 8000;
  int steps = 5;
};

// Random ids in [4, V) (no specials, no padding), [rows, columns].
agf::Tensor random_ids(int64_t rows, int64_t columns, int64_t vocabulary, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<std::size_t>(rows * columns));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = 4 + agf::Philox4x32::bits(seed, 0, i) % (vocabulary - 4);
  return agf::Tensor::from_vector(ids, {rows, columns}, agf::DType::i64);
}

double tokens_per_second(const agf::nn::TransformerConfig& config, const BenchTrainFlags& flags) {
  agf::nn::Transformer model(config, 1);
  model.train();
  agf::train::Adam adam(model.named_parameters());
  agf::nn::DropoutStream dropout(7);
  const agf::Tensor source = random_ids(flags.batch, flags.length, flags.vocabulary, 1);
  const agf::Tensor target_in = random_ids(flags.batch, flags.length, flags.vocabulary, 2);
  const agf::Tensor target_out = random_ids(flags.batch, flags.length, flags.vocabulary, 3);
  const agf::Tensor lengths = agf::Tensor::full({flags.batch}, static_cast<double>(flags.length), agf::DType::i64);
  auto step = [&] {
    const agf::Variable logits = model.forward(source, lengths, target_in, dropout);
    const agf::Variable loss = agf::cross_entropy(agf::reshape(logits, {-1, flags.vocabulary}), target_out.reshape({-1}),
                                                  {.label_smoothing = 0.1, .ignore_index = 0});
    loss.backward();
    adam.step(1e-4);
    adam.zero_grad();
  };
  step();  // warm-up
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < flags.steps; ++s) step();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / flags.steps;
  return static_cast<double>(flags.batch * flags.length) / seconds;
}

void bench_train(BenchTrainFlags flags) {
  if (flags.schemes.empty()) flags.schemes = {flags.model.pos + (flags.model.pcmv ? "+pcmv" : "")};
  fmt::print("training steps: {} preset, batch {} × {} tokens each side, vocabulary {}, {} threads, mean of {} steps\n",
             flags.model.preset, flags.batch, flags.length, flags.vocabulary, omp_get_max_threads(), flags.steps);
  fmt::print("{:<18} {:>14} {:>12}\n", "scheme", "target tok/s", "ms/step");
  for (const std::string& label : flags.schemes) {
    agf::cli::ModelFlags model = flags.model;
    const auto plus = label.find('+');
    model.pos = label.substr(0, plus);
    model.pcmv = label.find("+pcmv") != std::string::npos;
    model.abs_pe = label.find("+abs-pe") != std::string::npos;
    const double rate = tokens_per_second(model.config(flags.vocabulary), flags);
    fmt::print("{:<18} {:>14.0f} {:>12.1f}\n", label, rate, 1e3 * static_cast<double>(flags.batch * flags.length) / rate);
    std::fflush(stdout);
  }
}

const agf::cli::BenchRegistration registration{"train", "Target tokens/s of full training steps per scheme", [](CLI::App& command) {
  auto flags = std::make_shared<BenchTrainFlags>();
  flags->model.add_to(command);
  command.add_option("--schemes", flags->schemes, "Schemes to time, e.g. sinusoidal agf-m+pcmv (default: --pos)");
  command.add_option("--batch", flags->batch, "Sentences per batch")->capture_default_str()->check(CLI::PositiveNumber);
  command.add_option("--length", flags->length, "Tokens per sentence, each side")->capture_default_str()->check(CLI::PositiveNumber);
  command.add_option("--vocab", flags->vocabulary, "Vocabulary size")->capture_default_str()->check(CLI::Range(5, 1 << 20));
  command.add_option("--steps", flags->steps, "Timed steps (after one warm-up)")->capture_default_str()->check(CLI::PositiveNumber);
  command.callback([flags] { bench_train(*flags); });
}};

}  // namespace
