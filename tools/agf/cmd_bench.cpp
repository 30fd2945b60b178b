// agf bench: throughput of ops (and, as the trainer lands, of training steps).
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <chrono>

#include "core/random.h"
#include "ops/matmul.h"
#include "tools/agf/command.h"

namespace {

// Best-of-`repeats` wall time of `body`, after one warm-up call.
template <class Body>
double best_seconds(int repeats, Body body) {
  body();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

void bench_matmul(const std::vector<int64_t>& sizes, int repeats, const std::string& dtype_name) {
  const agf::DType dtype = agf::parse_dtype(dtype_name);
  fmt::print("matmul {} with {} threads (best of {})\n", dtype_name, omp_get_max_threads(), repeats);
  fmt::print("{:>6}  {:>10}  {:>10}\n", "n", "ms", "GFLOP/s");
  for (int64_t n : sizes) {
    agf::Generator generator(n);
    const agf::Tensor a = agf::uniform({n, n}, generator, -1, 1, dtype);
    const agf::Tensor b = agf::uniform({n, n}, generator, -1, 1, dtype);
    const double seconds = best_seconds(repeats, [&] { agf::ops::matmul(a, b); });
    const double flops = 2.0 * static_cast<double>(n) * n * n;
    fmt::print("{:>6}  {:>10.3f}  {:>10.1f}\n", n, seconds * 1e3, flops / seconds * 1e-9);
  }
}

const agf::cli::Registration registration{"bench", "Measure throughput of ops", [](CLI::App& command) {
  command.require_subcommand(1);
  auto* matmul = command.add_subcommand("matmul", "GFLOP/s of square matrix products");
  auto sizes = std::make_shared<std::vector<int64_t>>(std::vector<int64_t>{256, 512, 1024, 2048});
  auto repeats = std::make_shared<int>(5);
  auto dtype = std::make_shared<std::string>("f32");
  matmul->add_option("--sizes", *sizes, "Matrix sizes n (n×n @ n×n)")->capture_default_str();
  matmul->add_option("--repeats", *repeats, "Timed repetitions per size (best is reported)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  matmul->add_option("--dtype", *dtype, "f32 or f64")->capture_default_str();
  matmul->callback([=] { bench_matmul(*sizes, *repeats, *dtype); });
}};

}  // namespace
