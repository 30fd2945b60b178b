// agf bench matmul: f32 (or f64) GFLOP/s of square products through ops::matmul (Eigen GEMM).
#include <fmt/core.h>
#include <omp.h>

#include "core/random.h"
#include "ops/matmul.h"
#include "tools/agf/bench_timing.h"
#include "tools/agf/command.h"

namespace {

void bench_matmul(const std::vector<int64_t>& sizes, int repeats, const std::string& dtype_name) {
  const agf::DType dtype = agf::parse_dtype(dtype_name);
  fmt::print("matmul {} with {} threads (best of {})\n", dtype_name, omp_get_max_threads(), repeats);
  fmt::print("{:>6}  {:>10}  {:>10}\n", "n", "ms", "GFLOP/s");
  for (int64_t n : sizes) {
    agf::Generator generator(static_cast<uint64_t>(n));
    const agf::Tensor a = agf::uniform({n, n}, generator, -1, 1, dtype);
    const agf::Tensor b = agf::uniform({n, n}, generator, -1, 1, dtype);
    const double seconds = agf::cli::best_seconds(repeats, [&] { agf::ops::matmul(a, b); });
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    fmt::print("{:>6}  {:>10.3f}  {:>10.1f}\n", n, seconds * 1e3, flops / seconds * 1e-9);
  }
}

const agf::cli::BenchRegistration registration{"matmul", "GFLOP/s of square matrix products", [](CLI::App& command) {
  auto sizes = std::make_shared<std::vector<int64_t>>(std::vector<int64_t>{256, 512, 1024, 2048});
  auto repeats = std::make_shared<int>(5);
  auto dtype = std::make_shared<std::string>("f32");
  command.add_option("--sizes", *sizes, "Matrix sizes n (n×n @ n×n)")->capture_default_str();
  command.add_option("--repeats", *repeats, "Timed repetitions per size (the best is reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--dtype", *dtype, "f32 or f64")->capture_default_str();
  command.callback([=] { bench_matmul(*sizes, *repeats, *dtype); });
}};

}  // namespace
