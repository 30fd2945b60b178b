// agf bench allreduce: the cost of summing one step's gradients over the processes of a distributed run
// (train/gradient_sum.h), per model size: run it under mpirun -np N (docs/distributed.md). Each process
// makes the model, gives every parameter a gradient of ones, and times sum_gradients after a barrier, so
// that the figure is the sum itself and not the wait for a slower process, as it is in a training step's
// metrics. Prints the bucket copies and the collectives apart, and the bandwidths the collectives reached:
// algorithm bandwidth (bytes / time) and bus bandwidth (2·(N−1)/N · bytes / time, the link speed a ring
// allreduce needs to reach that time, comparable across N).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "nn/transformer.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "tools/agf/model_flags.h"
#include "train/distributed.h"
#include "train/gradient_sum.h"

namespace {

struct BenchAllreduceFlags {
  std::vector<std::string> presets{"cpu-small", "base", "paper-big"};
  int64_t vocabulary = 8000;
  int repeats = 5;
  double bucket_megabytes = static_cast<double>(agf::train::kDefaultBucketBytes >> 20);
};

void bench_allreduce(const BenchAllreduceFlags& flags) {
  agf::train::World& processes = agf::train::world();
  const bool root = processes.is_root();
  const double n = processes.size();
  if (root) {
    fmt::print("gradient allreduce: {} processes{}, f32 gradients in buckets of {:g} MB, best of {}\n",
               processes.size(), processes.size() == 1 ? " (nothing to sum: run it under mpirun -np N)" : "",
               flags.bucket_megabytes, flags.repeats);
    fmt::print("{:<10} {:>12} {:>10} {:>8} {:>12} {:>12} {:>10} {:>10}\n", "preset", "parameters", "MB", "buckets",
               "ms total", "ms allreduce", "algbw GB/s", "busbw GB/s");
  }
  for (const std::string& preset : flags.presets) {
    agf::nn::TransformerConfig config = agf::nn::TransformerConfig::from_preset(preset);
    config.vocabulary_size = flags.vocabulary;
    const agf::nn::Transformer model(config, 1);
    const auto parameters = model.named_parameters();
    agf::train::GradientSumTiming best;
    best.seconds = best.communication_seconds = 1e30;
    for (int repeat = 0; repeat <= flags.repeats; ++repeat) {  // the first is a warm-up
      for (const auto& [name, parameter] : parameters) parameter.set_grad(agf::Tensor::ones(parameter.shape()));
      processes.wait_for_all();
      const auto timing = agf::train::sum_gradients(processes, parameters,
                                                    static_cast<int64_t>(flags.bucket_megabytes * (1 << 20)));
      if (repeat == 0) continue;
      if (timing.seconds < best.seconds) best = timing;
    }
    // Each gradient is now the sum of N ones.
    for (const auto& [name, parameter] : parameters) {
      AGF_CHECK(parameter.grad().to_double_vector().front() == n, "bench allreduce: {} summed to {}, not {}", name,
                parameter.grad().to_double_vector().front(), n);
    }
    if (!root) continue;
    const double bytes = static_cast<double>(best.bytes);
    const double seconds = std::max(best.communication_seconds, 1e-12);
    fmt::print("{:<10} {:>12} {:>10.1f} {:>8} {:>12.2f} {:>12.2f} {:>10.2f} {:>10.2f}\n", preset,
               model.parameter_count(), bytes / 1e6, best.buckets, 1e3 * best.seconds, 1e3 * best.communication_seconds,
               bytes / seconds / 1e9, 2 * (n - 1) / n * bytes / seconds / 1e9);
    std::fflush(stdout);
  }
}

const agf::cli::BenchRegistration registration{
    "allreduce", "Time of one step's gradient sum over the processes (under mpirun)", [](CLI::App& command) {
      auto flags = std::make_shared<BenchAllreduceFlags>();
      command.add_option("--presets", flags->presets, "Model sizes")->capture_default_str();
      command.add_option("--vocab", flags->vocabulary, "Vocabulary size")
          ->capture_default_str()
          ->check(agf::cli::number_between(5, 1 << 20));
      command.add_option("--repeats", flags->repeats, "Timed sums (after one warm-up); the best is reported")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--bucket-mb", flags->bucket_megabytes, "Bucket size, MB")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.footer("Run it as: mpirun -np N agf bench allreduce (a single process has nothing to sum: 0 ms).");
      command.callback([flags] { bench_allreduce(*flags); });
    }};

}  // namespace
