// agf bench matmul: throughput of square products through ops::matmul — ops/cpu/gemm.h on the CPU
// (OpenBLAS or Eigen, named in the heading; GFLOP/s), cuBLAS on a GPU (TFLOP/s; each timed product ends with a wait for the device).
#include <fmt/core.h>
#include <omp.h>

#include "core/random.h"
#include "ops/cpu/gemm.h"
#include "ops/matmul.h"
#include "tools/agf/bench_timing.h"
#include "tools/agf/command.h"
#ifdef AGF_WITH_CUDA
#include "core/cuda/runtime.h"
#endif

namespace {

// "cpu", "cuda" or "cuda:N".
agf::Device parse_bench_device(const std::string& name) {
  if (name == "cpu") return agf::Device::cpu();
  if (name == "cuda") return agf::Device::cuda(0);
  if (name.rfind("cuda:", 0) == 0 && name.size() > 5 &&
      name.find_first_not_of("0123456789", 5) == std::string::npos) {
    return agf::Device::cuda(std::stoi(name.substr(5)));
  }
  agf::fail("bench matmul: --device {} is not cpu, cuda or cuda:N", name);
}

void bench_matmul(std::vector<int64_t> sizes, int repeats, const std::string& dtype_name, const std::string& device_name) {
  const agf::DType dtype = agf::parse_dtype(dtype_name);
  const agf::Device device = parse_bench_device(device_name);
  const bool gpu = device.is_cuda();
  if (sizes.empty()) sizes = gpu ? std::vector<int64_t>{1024, 2048, 4096, 8192} : std::vector<int64_t>{256, 512, 1024, 2048};
  if (gpu) {
    fmt::print("matmul {} on {} (cuBLAS, best of {})\n", dtype_name, device.name(), repeats);
  } else {
    fmt::print("matmul {} with {} threads, {} (best of {})\n", dtype_name, omp_get_max_threads(),
               agf::ops::cpu::gemm_library(), repeats);
  }
  fmt::print("{:>6}  {:>10}  {:>10}\n", "n", "ms", gpu ? "TFLOP/s" : "GFLOP/s");
  for (int64_t n : sizes) {
    agf::Generator generator(static_cast<uint64_t>(n));
    // Drawn in f32 on the CPU, then moved and converted (the CPU draws f32 and f64 only).
    const agf::Tensor a = agf::uniform({n, n}, generator, -1, 1, agf::DType::f32).to(device).to(dtype);
    const agf::Tensor b = agf::uniform({n, n}, generator, -1, 1, agf::DType::f32).to(device).to(dtype);
    const double seconds = agf::cli::best_seconds(repeats, [&] {
      agf::ops::matmul(a, b);
#ifdef AGF_WITH_CUDA
      if (gpu) agf::cuda::synchronize(device.index);  // the product is queued; time until it is done
#endif
    });
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    fmt::print("{:>6}  {:>10.3f}  {:>10.1f}\n", n, seconds * 1e3, flops / seconds * (gpu ? 1e-12 : 1e-9));
  }
}

const agf::cli::BenchRegistration registration{"matmul", "throughput of square matrix products", [](CLI::App& command) {
  auto sizes = std::make_shared<std::vector<int64_t>>();
  auto repeats = std::make_shared<int>(5);
  auto dtype = std::make_shared<std::string>("f32");
  auto device = std::make_shared<std::string>("cpu");
  command.add_option("--sizes", *sizes, "Matrix sizes n (n×n @ n×n); default 256..2048 on cpu, 1024..8192 on cuda");
  command.add_option("--repeats", *repeats, "Timed repetitions per size (the best is reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--dtype", *dtype, "f32 or f64 (cpu); f32, f64, f16 or bf16 (cuda)")->capture_default_str();
  command.add_option("--device", *device, "cpu, cuda or cuda:N")->capture_default_str();
  command.callback([=] { bench_matmul(*sizes, *repeats, *dtype, *device); });
}};

}  // namespace
