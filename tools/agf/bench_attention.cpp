// agf bench attention: forward + backward time of the attention op per positional scheme, and the ratio
// to `none`. Default shape B=32, H=8, T=64, dk=64 (the issue's); targets: agf-b/agf-m with PCM-V <= 1.3×
// none, agf-f with PCM-V <= 2.5× none. With --device cuda the tensors live on the GPU: each scheme is timed
// with the kernel the op picks (fused; materialized for agf-f) and again with the materializing kernel, whose
// time is reported beside it.
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <chrono>

#include "core/random.h"
#include "nn/positional/positional_encoding.h"
#include "ops/attention.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/attention.h"
#endif

namespace {

// Wall time of one call of `body`, in seconds, including the device work it queued.
template <class Body>
double seconds_of(const agf::Device& device, Body&& body) {
  agf::synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  body();
  agf::synchronize(device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct BenchFlags {
  int64_t batch = 32, heads = 8, length = 64, head_dim = 64;
  int repeats = 5;
  std::string dtype = "f32";
  std::string device = "cpu";
  bool causal = false;
  std::vector<std::string> only;  // scheme names to run (none always runs: it is the reference)
};

// The scheme's parameters at their initial values, as the nn classes create them.
agf::ops::PositionalParameters initial_parameters(const std::string& scheme, const BenchFlags& flags,
                                                  agf::DType dtype) {
  agf::nn::PositionalConfig config;
  config.scheme = scheme;
  config.heads = flags.heads;
  config.head_dim = flags.head_dim;
  const auto module = agf::nn::make_positional_encoding(config, dtype);
  const agf::PositionalVariables v = module->variables();
  agf::ops::PositionalParameters p;
  auto data = [](const agf::Variable& x) { return x.defined() ? x.data() : agf::Tensor(); };
  p.G = data(v.G), p.rho = data(v.rho), p.k = data(v.k), p.lc2 = data(v.lc2), p.lc3 = data(v.lc3);
  p.t5_table = data(v.t5_table), p.r1 = data(v.r1), p.r2 = data(v.r2);
  return p;
}

// The parameters on `device` (16-bit runs keep f32 parameters, as a model does).
agf::ops::PositionalParameters on_device(const agf::ops::PositionalParameters& p, const agf::Device& device) {
  auto move = [&](const agf::Tensor& t) { return t.defined() ? t.to(device) : agf::Tensor(); };
  return {move(p.G), move(p.rho), move(p.k), move(p.lc2), move(p.lc3), move(p.t5_table), move(p.r1), move(p.r2)};
}

// The op's forward, or (GPU, materialized = true) the materializing kernel's.
agf::ops::AttentionForward forward(const agf::Tensor& q, const agf::Tensor& k, const agf::Tensor& v,
                                   const agf::ops::PositionalParameters& p, const agf::ops::AttentionOptions& options,
                                   bool materialized) {
#ifdef AGF_WITH_CUDA
  if (materialized) {
    return agf::ops::cuda::attention_forward(q, k, v, agf::Tensor(), p, options,
                                             agf::ops::cuda::AttentionKernel::materialized);
  }
#endif
  return agf::ops::attention_forward(q, k, v, agf::Tensor(), p, options);
}

void bench_attention(const BenchFlags& flags) {
  const agf::DType dtype = agf::parse_dtype(flags.dtype);
  AGF_CHECK(flags.device == "cpu" || flags.device == "cuda", "bench attention: --device is cpu or cuda, got '{}'",
            flags.device);
  const agf::Device device = flags.device == "cuda" ? agf::Device::cuda() : agf::Device::cpu();
  const bool gpu = device.is_cuda();
  const agf::DType parameter_dtype = dtype == agf::DType::f64 ? agf::DType::f64 : agf::DType::f32;
  const int64_t B = flags.batch, H = flags.heads, T = flags.length, dk = flags.head_dim;
  agf::Generator generator(1);
  auto input = [&] { return agf::uniform({B, H, T, dk}, generator, -1, 1, parameter_dtype).to(dtype).to(device); };
  const agf::Tensor q = input(), k = input(), v = input(), grad = input();
  if (gpu) {
    fmt::print("attention forward+backward, {} B={} H={} T={} dk={} {}, {} (best of {})\n", flags.dtype, B, H, T, dk,
               flags.causal ? "causal" : "bidirectional", device.name(), flags.repeats);
    fmt::print("{:<18} {:>10} {:>10} {:>10} {:>8} {:>13} {:>12}\n", "scheme", "fwd ms", "bwd ms", "total ms", "× none",
               "materialized", "mat / op");
  } else {
    fmt::print("attention forward+backward, {} B={} H={} T={} dk={} {}, {} threads (best of {})\n", flags.dtype, B, H,
               T, dk, flags.causal ? "causal" : "bidirectional", omp_get_max_threads(), flags.repeats);
    fmt::print("{:<18} {:>10} {:>10} {:>10} {:>8}\n", "scheme", "fwd ms", "bwd ms", "total ms", "× none");
  }
  // The configurations, then rounds that time each of them in turn: on a shared machine the best of
  // interleaved rounds compares schemes under the same conditions.
  struct Configuration {
    std::string name;
    agf::ops::PositionalParameters parameters;
    agf::ops::AttentionOptions options;
    agf::ops::AttentionForward forward;
    double forward_seconds = 1e30, backward_seconds = 1e30;
    double materialized_seconds = 1e30;  // GPU: forward + backward with the materializing kernel
  };
  std::vector<Configuration> configurations;
  for (const agf::ops::PositionalScheme scheme : agf::ops::kPositionalSchemes) {
    for (bool pcmv : {false, true}) {
      if (pcmv && !agf::ops::has_coefficient(scheme)) continue;
      const std::string name(agf::ops::scheme_name(scheme));
      if (scheme != agf::ops::PositionalScheme::none && !flags.only.empty() &&
          std::find(flags.only.begin(), flags.only.end(), name) == flags.only.end()) {
        continue;
      }
      Configuration c;
      c.name = name + (pcmv ? " +pcmv" : "");
      c.parameters = on_device(initial_parameters(name, flags, parameter_dtype), device);
      c.options.scheme = scheme;
      c.options.pcmv = pcmv;
      c.options.causal = flags.causal;
      c.forward = forward(q, k, v, c.parameters, c.options, false);  // warm-up
      if (gpu) forward(q, k, v, c.parameters, c.options, true);
      configurations.push_back(std::move(c));
    }
  }
  for (int round = 0; round < flags.repeats; ++round) {
    for (Configuration& c : configurations) {
      c.forward_seconds = std::min(
          c.forward_seconds, seconds_of(device, [&] { c.forward = forward(q, k, v, c.parameters, c.options, false); }));
      c.backward_seconds = std::min(c.backward_seconds, seconds_of(device, [&] {
                                      agf::ops::attention_backward(grad, q, k, v, agf::Tensor(), c.parameters,
                                                                   c.options, c.forward.saved);
                                    }));
      if (gpu) {
        c.materialized_seconds = std::min(
            c.materialized_seconds, seconds_of(device, [&] {
              const agf::ops::AttentionForward f = forward(q, k, v, c.parameters, c.options, true);
              agf::ops::attention_backward(grad, q, k, v, agf::Tensor(), c.parameters, c.options, f.saved);
            }));
      }
    }
  }
  const double none_seconds = configurations.front().forward_seconds + configurations.front().backward_seconds;
  for (const Configuration& c : configurations) {
    const double total = c.forward_seconds + c.backward_seconds;
    if (gpu) {
      fmt::print("{:<18} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.2f} {:>13.3f} {:>12.2f}\n", c.name, c.forward_seconds * 1e3,
                 c.backward_seconds * 1e3, total * 1e3, total / none_seconds, c.materialized_seconds * 1e3,
                 c.materialized_seconds / total);
    } else {
      fmt::print("{:<18} {:>10.2f} {:>10.2f} {:>10.2f} {:>8.2f}\n", c.name, c.forward_seconds * 1e3,
                 c.backward_seconds * 1e3, total * 1e3, total / none_seconds);
    }
  }
}

const agf::cli::BenchRegistration registration{
    "attention", "Forward+backward time of the attention op per positional scheme", [](CLI::App& command) {
      auto flags = std::make_shared<BenchFlags>();
      command.add_option("--batch", flags->batch, "B")->capture_default_str()->check(agf::cli::positive_number());
      command.add_option("--heads", flags->heads, "H")->capture_default_str()->check(agf::cli::positive_number());
      command.add_option("--length", flags->length, "T (queries = keys)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--head-dim", flags->head_dim, "dk")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command
          .add_option("--repeats", flags->repeats, "Timed rounds (each times every scheme once; the best is reported)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--dtype", flags->dtype, "f32 or f64 (on cuda also f16, bf16)")->capture_default_str();
      command
          .add_option("--device", flags->device,
                      "cpu or cuda (cuda: the op's kernel, fused where it can, beside the materializing one)")
          ->capture_default_str();
      command.add_flag("--causal", flags->causal, "Causal mask (decoder self-attention)");
      command.add_option("--only", flags->only, "Schemes to time (default: all; none is always timed)");
      command.callback([flags] { bench_attention(*flags); });
    }};

}  // namespace
