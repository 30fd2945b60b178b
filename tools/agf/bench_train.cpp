// agf bench train: target tokens per second of full training steps (forward, backward, Adam) on a
// synthetic batch of 64 sentences × 24 tokens each side with an 8,000-token vocabulary, per scheme —
// the same workload as tools/bench/torch_peer.py bench, so the two can be compared in one run.
// On a GPU (--device cuda, --precision bf16|fp16) it also prints the model FLOP utilisation: the step's
// model FLOPs (nn/transformer_flops.h) per second against --peak-tflops (790: cuBLAS bf16 on an H200).
// On the CPU, --precision bf16 runs the matrix products with bf16 operands (ops/cpu/gemm_bf16.h) where the
// processor has bf16 arithmetic, naming the kernel; elsewhere it is refused.
#include <fmt/core.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "autograd/functions.h"
#include "core/philox.h"
#include "data/bpe_model.h"
#include "nn/transformer.h"
#include "nn/transformer_flops.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_bf16.h"
#include "tools/agf/bench_timing.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "tools/agf/model_flags.h"
#include "train/device_flag.h"
#include "train/mixed_precision.h"
#include "train/sequence_loss.h"

namespace {

struct BenchTrainFlags {
  agf::cli::ModelFlags model;
  std::vector<std::string> schemes;
  int64_t batch = 64, length = 24, vocabulary = 8000;
  int steps = 5;
  std::string device = "cpu";
  std::string precision = "fp32";
  std::string bf16_kernel;   // "" = the processor's best
  std::string gemm_library;  // "" = the processor's
  double peak_tflops = 790;
};

// Random ids in [4, V) (no specials, no padding), [rows, columns].
agf::Tensor random_ids(int64_t rows, int64_t columns, int64_t vocabulary, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<std::size_t>(rows * columns));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = 4 + agf::Philox4x32::bits(seed, 0, i) % (vocabulary - 4);
  return agf::Tensor::from_vector(ids, {rows, columns}, agf::DType::i64);
}

// What a timed run measured: the speed, and the loss of its first (warm-up) and last step, so that a
// speed is never reported for a run that is not training (a NaN loss, or one far from ln V at the start).
struct StepTiming {
  double seconds_per_step = 0;
  double first_loss = 0, last_loss = 0;
};

// The mean over flags.steps steps after one untimed warm-up step. The losses are read after the clock
// stops, so the timed steps keep the host waits of a training step and no more.
StepTiming time_steps(const agf::nn::TransformerConfig& config, const BenchTrainFlags& flags) {
  const agf::Device device = agf::train::parse_device(flags.device);
  agf::nn::Transformer model(config, 1);
  model.to(device);
  model.train();
  const agf::train::Precision precision = agf::train::parse_precision(flags.precision);
  agf::train::MixedPrecisionOptimizer optimizer(model.named_parameters(),
                                                agf::train::mixed_precision_options(precision, device));
  const agf::ops::cpu::ScopedMatmulPrecision products(agf::train::cpu_matmul_precision(precision, device));
  agf::nn::DropoutStream dropout(7);
  const agf::Tensor source = random_ids(flags.batch, flags.length, flags.vocabulary, 1).to(device);
  const agf::Tensor target_in = random_ids(flags.batch, flags.length, flags.vocabulary, 2).to(device);
  const agf::Tensor target_out = random_ids(flags.batch, flags.length, flags.vocabulary, 3).to(device);
  const agf::Tensor lengths =
      agf::Tensor::full({flags.batch}, static_cast<double>(flags.length), agf::DType::i64).to(device);
  auto step = [&] {
    const agf::Variable logits = model.forward(source, lengths, target_in, dropout);
    const agf::Variable loss = agf::train::sequence_loss(logits, target_out, 0.1);
    (loss * optimizer.loss_scale()).backward();
    optimizer.step(1e-4, 0.0);
    return loss.data();
  };
  StepTiming timing;
  timing.first_loss = step().item();  // warm-up: the caching allocator fills, cuBLAS picks its kernels
  agf::synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  agf::Tensor last_loss;
  for (int s = 0; s < flags.steps; ++s) last_loss = step();
  agf::synchronize(device);
  timing.seconds_per_step = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                            flags.steps;
  timing.last_loss = last_loss.item();
  return timing;
}

// Refuses a run that did not train: a non-finite loss, or a first loss far from ln V, the loss of a
// uniform prediction (label smoothing leaves it at ln V), which a freshly initialised model starts near.
void check_losses(const std::string& label, const StepTiming& timing, int64_t vocabulary) {
  const double uniform = std::log(static_cast<double>(vocabulary));
  AGF_CHECK(std::isfinite(timing.first_loss) && std::isfinite(timing.last_loss),
            "bench train: {}: the loss is not finite (first step {}, last step {}); no speed is reported", label,
            timing.first_loss, timing.last_loss);
  AGF_CHECK(timing.first_loss > 0.5 * uniform && timing.first_loss < 2 * uniform,
            "bench train: {}: the first step's loss {:.4g} is far from ln V = {:.4g} (a fresh model starts near "
            "it); no speed is reported",
            label, timing.first_loss, uniform);
}

void bench_train(BenchTrainFlags flags) {
  if (flags.schemes.empty()) flags.schemes = {flags.model.pos + (flags.model.pcmv ? "+pcmv" : "")};
  const agf::Device device = agf::train::usable_device(flags.device);
  const agf::train::Precision precision = agf::train::parse_precision(flags.precision);
  if (!flags.bf16_kernel.empty() && (precision != agf::train::Precision::bf16 || !device.is_cpu())) {
    throw CLI::ValidationError("--bf16-kernel", "needs --precision bf16 on the CPU");
  }
  if (!flags.gemm_library.empty() && (precision != agf::train::Precision::fp32 || !device.is_cpu())) {
    throw CLI::ValidationError("--gemm-library", "needs --precision fp32 on the CPU");
  }
  std::optional<agf::ops::cpu::ForceBf16Kernel> forced;
  if (!flags.bf16_kernel.empty()) forced.emplace(*agf::ops::cpu::parse_bf16_kernel(flags.bf16_kernel));
  std::optional<agf::ops::cpu::ForceGemmLibrary> forced_library;
  if (!flags.gemm_library.empty()) forced_library.emplace(*agf::ops::cpu::parse_gemm_library(flags.gemm_library));
  agf::train::check_precision_usable(precision, device, "bench train");
  fmt::print("training steps: {} preset, batch {} × {} tokens each side, vocabulary {}, {}, {}, mean of {} steps\n",
             flags.model.preset, flags.batch, flags.length, flags.vocabulary,
             device.is_cpu() ? fmt::format("{} threads", omp_get_max_threads()) : device.name(), flags.precision,
             flags.steps);
  if (device.is_cpu()) {
    const bool bf16 = agf::train::cpu_matmul_precision(precision, device) == agf::ops::cpu::MatmulPrecision::bf16;
    fmt::print("matrix products: {}\n",
               bf16 ? "bf16 operands, f32 sums, kernel " + agf::ops::cpu::bf16_kernel_name(agf::ops::cpu::bf16_kernel())
                    : "f32, " + agf::ops::cpu::gemm_library());
  }
  fmt::print("{:<18} {:>14} {:>10} {:>10} {:>8} {:>19}\n", "scheme", "target tok/s", "ms/step", "TFLOP/s",
             fmt::format("MFU@{:g}", flags.peak_tflops), "loss first → last");
  for (const std::string& label : flags.schemes) {
    agf::cli::ModelFlags model = flags.model;
    const auto plus = label.find('+');
    model.pos = label.substr(0, plus);
    model.pcmv = label.find("+pcmv") != std::string::npos;
    model.abs_pe = label.find("+abs-pe") != std::string::npos;
    const agf::nn::TransformerConfig config = model.config(flags.vocabulary);
    const StepTiming timing = time_steps(config, flags);
    check_losses(label, timing, flags.vocabulary);
    const double seconds = timing.seconds_per_step;
    const double rate = static_cast<double>(flags.batch * flags.length) / seconds;
    const double tflops = agf::nn::training_step_flops(config, flags.batch, flags.length, flags.length) / seconds /
                          1e12;
    // MFU only on a GPU: --peak-tflops is a GPU's matrix rate, meaningless against a CPU run.
    const std::string mfu = device.is_cuda() ? fmt::format("{:.1f}%", 100 * tflops / flags.peak_tflops) : "-";
    fmt::print("{:<18} {:>14.0f} {:>10.1f} {:>10.3g} {:>8} {:>8.4f} → {:<8.4f}\n", label, rate, 1e3 * seconds, tflops,
               mfu, timing.first_loss, timing.last_loss);
    std::fflush(stdout);
  }
}

const agf::cli::BenchRegistration registration{
    "train", "Target tokens/s of full training steps per scheme", [](CLI::App& command) {
      auto flags = std::make_shared<BenchTrainFlags>();
      flags->model.add_to(command);
      command.add_option("--schemes", flags->schemes, "Schemes to time, e.g. sinusoidal agf-m+pcmv (default: --pos)");
      command.add_option("--batch", flags->batch, "Sentences per batch")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--length", flags->length, "Tokens per sentence, each side")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--vocab", flags->vocabulary, "Vocabulary size")
          ->capture_default_str()
          ->check(agf::cli::number_between(5, 1 << 20));
      command.add_option("--steps", flags->steps, "Timed steps (after one warm-up)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--device", flags->device, "cpu or cuda[:N]")->capture_default_str();
      command.add_option("--precision", flags->precision, "fp32; bf16 (GPU, or a CPU with AVX512-BF16); fp16 (GPU)")
          ->capture_default_str();
      command
          .add_option("--bf16-kernel", flags->bf16_kernel,
                      "With --precision bf16 on the CPU: this kernel instead of the processor's best (amx, "
                      "avx512bf16, or portable: slow)")
          ->check(CLI::IsMember(agf::ops::cpu::bf16_kernel_flags()));
      command
          .add_option("--gemm-library", flags->gemm_library,
                      "With --precision fp32 on the CPU: the products by this library instead of the processor's "
                      "(onednn, openblas or eigen: one this build has)")
          ->check(CLI::IsMember(agf::ops::cpu::gemm_library_flags()));
      command
          .add_option("--peak-tflops", flags->peak_tflops, "The MFU denominator, TFLOP/s (790: cuBLAS bf16 on an H200)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.callback([flags] { bench_train(*flags); });
    }};

}  // namespace
