// agf bench matmul: throughput of square products, and with --model-shapes of a training step's products,
// through ops::matmul — ops/cpu/gemm.h on the CPU (oneDNN, OpenBLAS or Eigen, named in the heading; GFLOP/s;
// --gemm-library NAME times another library than the processor's), cuBLAS
// on a GPU (TFLOP/s; each timed product ends with a wait for the device). On the CPU, --precision bf16 times
// the f32 products with bf16 operands (ops/cpu/gemm_bf16.h, the kernel named in the heading) where the
// processor has bf16 arithmetic; --bf16-kernel NAME times another kernel than the processor's best (portable:
// anywhere, slowly).
#include <fmt/core.h>
#include <omp.h>

#include <optional>
#include <tuple>

#include "core/number_text.h"
#include "core/random.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_bf16.h"
#include "ops/cpu/matmul_precision.h"
#include "ops/matmul.h"
#include "tools/agf/bench_timing.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#ifdef AGF_WITH_CUDA
#include "core/cuda/runtime.h"
#endif

namespace {

// "cpu", "cuda" or "cuda:N".
agf::Device parse_bench_device(const std::string& name) {
  if (name == "cpu") return agf::Device::cpu();
  if (name == "cuda") return agf::Device::cuda(0);
  if (name.rfind("cuda:", 0) == 0) {
    if (const auto index = agf::parse_number<int>(std::string_view(name).substr(5)); index && *index >= 0) {
      return agf::Device::cuda(*index);
    }
  }
  agf::fail("bench matmul: --device {} is not cpu, cuda or cuda:N", name);
}

// One timed product: a [m, k] @ b [k, n], either operand possibly a transposed view (layout "NT": b is the
// transpose of a stored [n, k]; "TN": a is the transpose of a stored [k, m]), as the model makes them.
struct Product {
  std::string name;
  int64_t m = 0, k = 0, n = 0;
  bool a_transposed = false, b_transposed = false;
};

// The products of a cpu-small training step on 64 × 24 tokens (rows = 1536, d = 256, FFN 1024, vocabulary
// 8000), as Linear and matmul_backward make them for y = x·Wᵀ (W [out, in]): the forward x·Wᵀ (NT), the input
// gradient G·W (NN), the weight gradient xᵀ·G (TN). Names carry no spaces (matmul_vs_torch.sh splits rows).
std::vector<Product> model_products() {
  const int64_t rows = 64 * 24, d = 256, ff = 1024, vocabulary = 8000;
  std::vector<Product> products;
  for (const auto& [layer, in, out] : {std::tuple{"d", d, d}, std::tuple{"ffn-in", d, ff}, std::tuple{"ffn-out", ff, d},
                                       std::tuple{"logits", d, vocabulary}}) {
    products.push_back({fmt::format("xWt-{}", layer), rows, in, out, false, true});
    products.push_back({fmt::format("gW-{}", layer), rows, out, in, false, false});
    products.push_back({fmt::format("xtG-{}", layer), in, rows, out, true, false});
  }
  return products;
}

struct BenchMatmulFlags {
  std::vector<int64_t> sizes;
  bool model_shapes = false;
  int repeats = 5;
  std::string dtype = "f32", device = "cpu", precision = "fp32";
  std::string bf16_kernel;   // "" = the processor's best
  std::string gemm_library;  // "" = the processor's
};

void bench_matmul(BenchMatmulFlags flags) {
  std::vector<int64_t>& sizes = flags.sizes;
  const bool model_shapes = flags.model_shapes;
  const int repeats = flags.repeats;
  const std::string& dtype_name = flags.dtype;
  const agf::DType dtype = agf::parse_dtype(dtype_name);
  const agf::Device device = parse_bench_device(flags.device);
  const bool gpu = device.is_cuda();
  // --precision bf16: the CPU's f32 products with bf16 operands, by the processor's kernel or, asked for, the
  // portable one.
  // (contradicting flags exit 2, as CLI11's own errors; a processor without bf16 arithmetic exits 1)
  const bool bf16 = flags.precision == "bf16";
  if (!flags.bf16_kernel.empty() && !bf16) throw CLI::ValidationError("--bf16-kernel", "needs --precision bf16");
  if (bf16 && (gpu || dtype != agf::DType::f32)) {
    throw CLI::ValidationError("--precision", "bf16 is for f32 products on the CPU (on a GPU: --dtype bf16)");
  }
  if (!flags.gemm_library.empty() && (bf16 || gpu || dtype != agf::DType::f32)) {
    throw CLI::ValidationError("--gemm-library", "is for f32 products on the CPU (--precision fp32)");
  }
  std::optional<agf::ops::cpu::ForceBf16Kernel> forced;
  if (!flags.bf16_kernel.empty()) forced.emplace(*agf::ops::cpu::parse_bf16_kernel(flags.bf16_kernel));
  std::optional<agf::ops::cpu::ForceGemmLibrary> forced_library;
  if (!flags.gemm_library.empty()) forced_library.emplace(*agf::ops::cpu::parse_gemm_library(flags.gemm_library));
  AGF_CHECK(!bf16 || agf::ops::cpu::bf16_kernel() != agf::ops::cpu::Bf16Kernel::none,
            "bench matmul: --precision bf16: {}; --bf16-kernel portable times the portable kernel instead (slow: "
            "for checking, not a speed)",
            agf::ops::cpu::bf16_unavailable_reason());
  const agf::ops::cpu::ScopedMatmulPrecision precision_scope(bf16 ? agf::ops::cpu::MatmulPrecision::bf16
                                                                  : agf::ops::cpu::MatmulPrecision::f32);
  if (sizes.empty() && !model_shapes) {
    sizes = gpu ? std::vector<int64_t>{1024, 2048, 4096, 8192} : std::vector<int64_t>{256, 512, 1024, 2048};
  }
  std::vector<Product> products;
  for (int64_t n : sizes) products.push_back({fmt::format("n={}", n), n, n, n});
  if (model_shapes) {
    const std::vector<Product> model = model_products();
    products.insert(products.end(), model.begin(), model.end());
  }
  if (gpu) {
    fmt::print("matmul {} on {} (cuBLAS, best of {})\n", dtype_name, device.name(), repeats);
  } else {
    fmt::print("matmul {} with {} threads, {} (best of {})\n", dtype_name, omp_get_max_threads(),
               bf16
                   ? "bf16 operands, f32 sums, kernel " + agf::ops::cpu::bf16_kernel_name(agf::ops::cpu::bf16_kernel())
                   : (dtype == agf::DType::f64 ? agf::ops::cpu::gemm_library<double>() : agf::ops::cpu::gemm_library()),
               repeats);
  }
  fmt::print("{:<12} {:>5} {:>5} {:>5} {:>6}  {:>10}  {:>10}\n", "product", "m", "k", "n", "layout", "ms",
             gpu ? "TFLOP/s" : "GFLOP/s");
  for (const Product& p : products) {
    agf::Generator generator(static_cast<uint64_t>(p.m * 7 + p.k * 3 + p.n));
    // Drawn in f32 on the CPU, then moved and converted (the CPU draws f32 and f64 only).
    auto operand = [&](int64_t rows, int64_t cols, bool transposed) {
      const agf::Shape stored = transposed ? agf::Shape{cols, rows} : agf::Shape{rows, cols};
      const agf::Tensor t = agf::uniform(stored, generator, -1, 1, agf::DType::f32).to(device).to(dtype);
      return transposed ? t.transpose(0, 1) : t;
    };
    const agf::Tensor a = operand(p.m, p.k, p.a_transposed), b = operand(p.k, p.n, p.b_transposed);
    const double seconds = agf::cli::best_seconds(repeats, [&] {
      agf::ops::matmul(a, b);
#ifdef AGF_WITH_CUDA
      if (gpu) agf::cuda::synchronize(device.index);  // the product is queued; time until it is done
#endif
    });
    const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.k) * static_cast<double>(p.n);
    const std::string layout = std::string(p.a_transposed ? "T" : "N") + (p.b_transposed ? "T" : "N");
    fmt::print("{:<12} {:>5} {:>5} {:>5} {:>6}  {:>10.3f}  {:>10.1f}\n", p.name, p.m, p.k, p.n, layout, seconds * 1e3,
               flops / seconds * (gpu ? 1e-12 : 1e-9));
  }
}

const agf::cli::BenchRegistration registration{
    "matmul", "throughput of matrix products (square, or the model's)", [](CLI::App& command) {
      auto flags = std::make_shared<BenchMatmulFlags>();
      command.add_option("--sizes", flags->sizes,
                         "Matrix sizes n (n×n @ n×n); default 256..2048 on cpu, 1024..8192 on cuda");
      command.add_flag(
          "--model-shapes", flags->model_shapes,
          "Also (or, without --sizes, only) the products of a cpu-small training step, transposed forms included");
      command.add_option("--repeats", flags->repeats, "Timed repetitions per size (the best is reported)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--dtype", flags->dtype, "f32 or f64 (cpu); f32, f64, f16 or bf16 (cuda)")
          ->capture_default_str();
      command.add_option("--device", flags->device, "cpu, cuda or cuda:N")->capture_default_str();
      command
          .add_option("--precision", flags->precision,
                      "fp32, or bf16: f32 products with bf16 operands on the CPU (needs AVX512-BF16)")
          ->capture_default_str()
          ->check(CLI::IsMember({"fp32", "bf16"}));
      command
          .add_option("--bf16-kernel", flags->bf16_kernel,
                      "With --precision bf16: this kernel instead of the processor's best (amx, avx512bf16, or "
                      "portable: on any processor, slow: it checks the path, it is not a speed)")
          ->check(CLI::IsMember(agf::ops::cpu::bf16_kernel_flags()));
      command
          .add_option("--gemm-library", flags->gemm_library,
                      "f32 products by this library instead of the processor's (onednn, openblas or eigen: one this "
                      "build has)")
          ->check(CLI::IsMember(agf::ops::cpu::gemm_library_flags()));
      command.callback([flags] { bench_matmul(*flags); });
    }};

}  // namespace
