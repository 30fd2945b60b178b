// The CPU's bf16 GEMM (ops/cpu/gemm_bf16.h) against two readable references over the same bf16-rounded
// inputs: the arithmetic contract of bf16_tile.h written as a plain triple loop in f32 (which the portable
// kernel must equal bit for bit, whatever the blocking and threads), and the product in f64 (which every
// kernel must meet within the f32 accumulation bound). Every layout of A and B, odd and even k, k = 0 and 1,
// extents that are not multiples of the tile or the blocks, shapes that cross every block and run 2 threads,
// ldc > n. The AVX512-BF16 and AMX kernels run where the processor has them and are skipped, saying so,
// elsewhere.
#include <catch2/catch.hpp>
#include <omp.h>

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "autograd/gradcheck.h"
#include "core/half.h"
#include "ops/cpu/bf16_tile.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_bf16.h"
#include "ops/cpu/matmul_precision.h"
#include "ops/matmul.h"
#include "tests/ops/stored_matrix.h"
#include "tests/skip.h"

using agf::ops::cpu::Bf16Kernel;
using agf::ops::cpu::GemmMatrix;
using agf::test::StoredMatrix;

namespace {

// x as the kernels read it: a subnormal read as zero (as vdpbf16ps reads it), else rounded to bf16 (core/half.h).
float bf16_value(float x) {
  if (std::fpclassify(x) == FP_SUBNORMAL) return std::copysign(0.0f, x);
  return agf::BFloat16::to_float(agf::BFloat16::from_float(x));
}

struct Product {
  std::vector<float> c;           // m × ldc, the padding columns hold a sentinel
  std::vector<float> contract;    // the f32 contract: Σ over pairs, odd element first, each sum rounded
  std::vector<double> exact;      // Σ_p bf16(a)·bf16(b) in f64
  std::vector<double> magnitude;  // Σ_p |bf16(a)·bf16(b)|
  int64_t m = 0, n = 0, k = 0, ldc = 0;
};

constexpr float kSentinel = 7.0f;

// C from `kernel` (or, without one, from ops::cpu::gemm in f32), and the references.
Product multiply(std::optional<Bf16Kernel> kernel, int64_t m, int64_t n, int64_t k, bool a_column, bool b_column) {
  const StoredMatrix<float> a(m, k, a_column, 3, 11), b(k, n, b_column, 5, 12);
  Product r;
  r.m = m, r.n = n, r.k = k, r.ldc = n + 2;
  r.c.assign(static_cast<std::size_t>(m * r.ldc), kSentinel);
  if (kernel) {
    agf::ops::cpu::gemm_bf16(*kernel, m, n, k, a.view(), b.view(), r.c.data(), r.ldc);
  } else {
    agf::ops::cpu::gemm<float>(m, n, k, a.view(), b.view(), r.c.data(), r.ldc);
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; p += 2) {
        if (p + 1 < k) acc += bf16_value(a.at(i, p + 1)) * bf16_value(b.at(p + 1, j));
        acc += bf16_value(a.at(i, p)) * bf16_value(b.at(p, j));
      }
      double exact = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double term = double(bf16_value(a.at(i, p))) * double(bf16_value(b.at(p, j)));
        exact += term;
        magnitude += std::abs(term);
      }
      r.contract.push_back(acc);
      r.exact.push_back(exact);
      r.magnitude.push_back(magnitude);
    }
  }
  return r;
}

float at(const Product& r, int64_t i, int64_t j) { return r.c[static_cast<std::size_t>(i * r.ldc + j)]; }

// |C - exact| <= γ_k · Σ|terms|, γ_k = k·u/(1 - k·u), u = 2^-24: the bound of k sums rounded to f32 (each
// bf16 product is exact in f32). Returns the worst ratio error / bound (≤ 1 passes).
double worst_against_exact(const Product& r) {
  const double u = std::ldexp(1.0, -24), ku = static_cast<double>(r.k) * u;
  const double gamma = ku / (1 - ku);
  double worst = 0;
  for (int64_t i = 0; i < r.m; ++i) {
    for (int64_t j = 0; j < r.n; ++j) {
      const std::size_t e = static_cast<std::size_t>(i * r.n + j);
      const double error = std::abs(double(at(r, i, j)) - r.exact[e]);
      // (a bound of 0 — k = 0, or every term 0 — needs an exact 0)
      worst = agf::test::worse_of(worst, error == 0 ? 0.0 : error / (gamma * r.magnitude[e]));
    }
  }
  return worst;
}

bool padding_intact(const Product& r) {
  for (int64_t i = 0; i < r.m; ++i)
    for (int64_t j = r.n; j < r.ldc; ++j)
      if (at(r, i, j) != kSentinel) return false;
  return true;
}

int64_t equal_to_contract(const Product& r) {
  int64_t equal = 0;
  for (int64_t i = 0; i < r.m; ++i)
    for (int64_t j = 0; j < r.n; ++j)
      equal += std::bit_cast<uint32_t>(at(r, i, j)) ==
               std::bit_cast<uint32_t>(r.contract[static_cast<std::size_t>(i * r.n + j)]);
  return equal;
}

// m, n, k: single elements; k odd and even; a tile (14 × 32, and AMX's 32 × 32 with 16 pairs) exactly and one
// past it; k across the depth block (256) twice; rows across several row blocks with 2 threads; columns across
// the 2048-column block with few rows (the columns then split between threads) and k across blocks; a product
// that runs 2 threads over several k blocks; columns across AMX's 8192-column block. (2 threads from 2^21
// multiply-adds on: the last four.)
const std::vector<std::array<int64_t, 3>> kShapes = {{1, 1, 1},     {1, 1, 2},     {2, 3, 1},      {13, 31, 7},
                                                     {14, 32, 256}, {15, 33, 257}, {32, 32, 32},   {33, 31, 33},
                                                     {29, 65, 513}, {700, 40, 80}, {3, 2100, 401}, {100, 300, 600},
                                                     {40, 8300, 70}};

}  // namespace

TEST_CASE("the portable bf16 GEMM computes the f32 contract bit for bit, for every layout, shape and thread count",
          "[ops][matmul][gemm][bf16]") {
  const int threads_before = omp_get_max_threads();
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (const auto& [m, n, k] : kShapes) {
      for (bool a_column : {false, true}) {
        for (bool b_column : {false, true}) {
          INFO("threads " << threads << " m " << m << " n " << n << " k " << k << " a column-major " << a_column
                          << " b column-major " << b_column);
          const Product r = multiply(Bf16Kernel::portable, m, n, k, a_column, b_column);
          CHECK(padding_intact(r));
          CHECK(equal_to_contract(r) == m * n);
          CHECK(worst_against_exact(r) <= 1.0);
        }
      }
    }
  }
  omp_set_num_threads(threads_before);
}

TEST_CASE("the bf16 GEMM is the f32 GEMM within bf16's rounding of the inputs", "[ops][matmul][gemm][bf16]") {
  // Each input is rounded by at most u = 2^-8 relatively (bf16 keeps 8 significant bits), so each product by
  // at most 2^-7 + 2^-16; both results sum in f32 (γ_k each). So |C_bf16 - C_f32| <= (2^-7 + 2^-16 + 2·γ_k)
  // · Σ|a·b|, where Σ|a·b| of the f32 inputs is at most (1 + 2^-6) times that of the bf16 ones.
  for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{{29, 65, 513}, {100, 300, 600}}) {
    const Product bf16 = multiply(Bf16Kernel::portable, m, n, k, false, true);
    const Product f32 = multiply(std::nullopt, m, n, k, false, true);
    const double gamma = static_cast<double>(k) * std::ldexp(1.0, -24) * 1.001;
    double worst = 0, largest_difference = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double magnitude = bf16.magnitude[static_cast<std::size_t>(i * n + j)] * (1 + std::ldexp(1.0, -6));
        const double bound = (std::ldexp(1.0, -7) + std::ldexp(1.0, -16) + 2 * gamma) * magnitude;
        const double difference = std::abs(double(at(bf16, i, j)) - double(at(f32, i, j)));
        worst = agf::test::worse_of(worst, difference / bound);
        largest_difference = std::max(largest_difference, difference);
      }
    }
    INFO("m " << m << " n " << n << " k " << k << ": worst |C_bf16 - C_f32| / bound " << worst);
    CHECK(worst <= 1.0);
    CHECK(largest_difference > 1e-4);  // the inputs were rounded: this is not the f32 product
  }
}

TEST_CASE("the bf16 GEMM with an empty inner dimension writes zeros, and with no output writes nothing",
          "[ops][matmul][gemm][bf16]") {
  std::vector<float> c(8, 5.0f);
  const float none = 0;
  agf::ops::cpu::gemm_bf16(Bf16Kernel::portable, 2, 3, 0, {&none, 1, false}, {&none, 3, false}, c.data(), 4);
  CHECK(c == std::vector<float>{0, 0, 0, 5, 0, 0, 0, 5});
  std::vector<float> untouched(4, 5.0f);
  agf::ops::cpu::gemm_bf16(Bf16Kernel::portable, 0, 4, 2, {&none, 2, false}, {&none, 4, false}, untouched.data(), 4);
  agf::ops::cpu::gemm_bf16(Bf16Kernel::portable, 4, 0, 2, {&none, 2, false}, {&none, 0, false}, untouched.data(), 0);
  CHECK(untouched == std::vector<float>(4, 5.0f));
}

TEST_CASE("bf16 rounding: to nearest, ties to even, nan stays nan, inf, and past the largest finite value",
          "[ops][gemm][bf16][half]") {
  using agf::BFloat16;
  const auto rounded = [](float x) { return BFloat16::to_float(BFloat16::from_float(x)); };
  const float ulp = 0x1p-7f;                                     // of bf16 at 1 (8 significant bits)
  CHECK(rounded(1.0f + ulp / 2) == 1.0f);                        // a tie, to the even 1
  CHECK(rounded(1.0f + ulp + ulp / 2) == 1.0f + 2 * ulp);        // a tie, to the even 1 + 2 ulp
  CHECK(rounded(1.0f + ulp / 2 + 0x1p-23f) == 1.0f + ulp);       // just above a tie: up
  CHECK(rounded(1.0f + ulp / 2 - 0x1p-23f) == 1.0f);             // just below: down
  CHECK(rounded(-(1.0f + ulp + ulp / 2)) == -(1.0f + 2 * ulp));  // the sign does not matter
  CHECK(std::isnan(rounded(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(rounded(std::bit_cast<float>(0x7f800001u))));  // a nan with only the lowest payload bit
  CHECK(std::isnan(rounded(std::bit_cast<float>(0xff80ffffu))));  // negative, payload in the lower half only
  CHECK(rounded(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(rounded(-std::numeric_limits<float>::infinity()) == -std::numeric_limits<float>::infinity());
  // The largest finite bf16 is 0x7f7f = (2 - 2^-7)·2^127. Above it, half an ulp (2^120) away, is the tie with
  // 2^128, which rounds to the even neighbour: infinity; so does FLT_MAX.
  const float largest = std::bit_cast<float>(0x7f7f0000u);
  CHECK(rounded(largest) == largest);
  CHECK(rounded(std::bit_cast<float>(0x7f7f7fffu)) == largest);
  CHECK(std::isinf(rounded(std::bit_cast<float>(0x7f7f8000u))));
  CHECK(std::isinf(rounded(std::numeric_limits<float>::max())));
  CHECK(rounded(-std::numeric_limits<float>::max()) == -std::numeric_limits<float>::infinity());

  // The GEMM reads its operands so: 1 × 1 × 1 products a·1.
  const auto product = [](float a) {
    const float one = 1.0f;
    float c = 0;
    agf::ops::cpu::gemm_bf16(Bf16Kernel::portable, 1, 1, 1, {&a, 1, false}, {&one, 1, false}, &c, 1);
    return c;
  };
  CHECK(product(1.0f + ulp + ulp / 2) == 1.0f + 2 * ulp);
  CHECK(std::isnan(product(std::numeric_limits<float>::quiet_NaN())));
  CHECK(product(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(std::isinf(product(std::numeric_limits<float>::max())));
  CHECK(product(0x1p-126f) == 0x1p-126f);  // the smallest normal stays
  CHECK(product(0x1p-130f) == 0.0f);       // a subnormal is read as zero, as vdpbf16ps reads it
  // so is the largest subnormal, which rounding alone would take up to the smallest normal
  CHECK(product(std::bit_cast<float>(0x007fffffu)) == 0.0f);
}

namespace {

// Each processor kernel against both references; `missing` says why it is skipped where it cannot run.
void check_processor_kernel(Bf16Kernel kernel, const char* missing) {
  if (!agf::ops::cpu::bf16_kernel_supported(kernel)) AGF_SKIP(missing);
  int64_t elements = 0, bitwise = 0;
  const int threads_before = omp_get_max_threads();
  std::vector<std::vector<float>> one_thread;  // each product's C with 1 thread, to compare with 2
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::size_t product = 0;
    for (const auto& [m, n, k] : kShapes) {
      for (bool a_column : {false, true}) {
        for (bool b_column : {false, true}) {
          INFO("threads " << threads << " m " << m << " n " << n << " k " << k << " a column-major " << a_column
                          << " b column-major " << b_column);
          const Product r = multiply(kernel, m, n, k, a_column, b_column);
          CHECK(padding_intact(r));
          CHECK(worst_against_exact(r) <= 1.0);
          elements += m * n;
          bitwise += equal_to_contract(r);
          if (threads == 1) {
            one_thread.push_back(r.c);
          } else {
            CHECK(r.c == one_thread.at(product));  // the same bits whatever the threads
          }
          ++product;
        }
      }
    }
  }
  omp_set_num_threads(threads_before);
  // Intel describes vdpbf16ps as exactly the contract, tdpbf16ps with the even element first; whether a
  // processor rounds so is worth knowing, not a failure (the bound above is what is required).
  WARN(agf::ops::cpu::bf16_kernel_name(kernel)
       << " equals the portable kernel's contract bit for bit in " << bitwise << " of " << elements << " elements");
}

}  // namespace

TEST_CASE("the AVX512-BF16 GEMM meets the f32 accumulation bound for every layout and shape",
          "[ops][matmul][gemm][bf16][avx512bf16]") {
  check_processor_kernel(Bf16Kernel::avx512bf16,
                         "this processor has no AVX512-BF16 (vdpbf16ps); the kernel is compiled but cannot run here");
}

TEST_CASE("the AMX GEMM meets the f32 accumulation bound for every layout and shape",
          "[ops][matmul][gemm][bf16][amx]") {
  check_processor_kernel(Bf16Kernel::amx,
                         "this processor (or its Linux) gives no AMX-BF16 tiles; the kernel is compiled but cannot run "
                         "here");
}

TEST_CASE("the AMX GEMM is exact where every sum is: small integer operands, each layout, across blocks",
          "[ops][matmul][gemm][bf16][amx]") {
  if (!agf::ops::cpu::bf16_kernel_supported(Bf16Kernel::amx)) {
    AGF_SKIP("this processor (or its Linux) gives no AMX-BF16 tiles");
  }
  // tdpbf16ps sums a tile's pairs in an order (and with intermediate roundings) of the processor's own: on a
  // Sapphire Rapids it equals the contract in about half of the elements (the bound test above). With integer
  // operands in [-8, 8] every partial sum is an integer below 2^24, exact in f32 in any order, so the result must
  // be the exact product bit for bit: a misplaced word of A's rows or B's padded panels cannot hide in rounding.
  for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{{33, 65, 300}, {400, 70, 33}, {64, 2100, 513}}) {
    for (bool a_column : {false, true}) {
      for (bool b_column : {false, true}) {
        StoredMatrix<float> a(m, k, a_column, 3, 11), b(k, n, b_column, 5, 12);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) a.at(i, p) = std::round(8 * a.at(i, p));
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) b.at(p, j) = std::round(8 * b.at(p, j));
        std::vector<float> c(static_cast<std::size_t>(m * n));
        agf::ops::cpu::gemm_bf16(Bf16Kernel::amx, m, n, k, a.view(), b.view(), c.data(), n);
        int64_t wrong = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double exact = 0;
            for (int64_t p = 0; p < k; ++p) exact += double(a.at(i, p)) * double(b.at(p, j));
            wrong += double(c[static_cast<std::size_t>(i * n + j)]) != exact;
          }
        }
        INFO("m " << m << " n " << n << " k " << k << " a column-major " << a_column << " b column-major " << b_column);
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("ops::matmul under MatmulPrecision::bf16 rounds the operands of f32 products only", "[ops][matmul][bf16]") {
  using agf::DType;
  using agf::Tensor;
  using agf::ops::cpu::MatmulPrecision;
  using agf::ops::cpu::ScopedMatmulPrecision;
  agf::Generator generator(5);
  const Tensor a = agf::uniform({3, 20, 33}, generator, -1, 1, DType::f32);  // a batch of 3: the nested path
  const Tensor b = agf::uniform({33, 17}, generator, -1, 1, DType::f32);
  const Tensor a64 = a.to(DType::f64), b64 = b.to(DType::f64);
  const std::vector<double> f32_product = agf::ops::matmul(a, b).to_double_vector();
  const std::vector<double> f64_product = agf::ops::matmul(a64, b64).to_double_vector();
  // The expected bf16 product: each batch matrix through the portable GEMM (the kernel is exercised above).
  std::vector<double> expected;
  for (int64_t batch = 0; batch < 3; ++batch) {
    std::vector<float> c(20 * 17);
    agf::ops::cpu::gemm_bf16(Bf16Kernel::portable, 20, 17, 33, {a.data<float>() + batch * 20 * 33, 33, false},
                             {b.data<float>(), 17, false}, c.data(), 17);
    expected.insert(expected.end(), c.begin(), c.end());
  }
  {
    const agf::ops::cpu::ForceBf16Kernel portable(agf::ops::cpu::Bf16Kernel::portable);
    const ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
    CHECK(agf::ops::cpu::matmul_precision() == MatmulPrecision::bf16);
    CHECK(agf::ops::matmul(a, b).to_double_vector() == expected);
    CHECK(agf::ops::matmul(a.transpose(-1, -2).contiguous().transpose(-1, -2), b).to_double_vector() == expected);
    CHECK(agf::ops::matmul(a64, b64).to_double_vector() == f64_product);  // f64: untouched, bit for bit
  }
  CHECK(agf::ops::cpu::matmul_precision() == MatmulPrecision::f32);  // the guard restored it
  CHECK(agf::ops::matmul(a, b).to_double_vector() == f32_product);
  CHECK(f32_product != expected);
  if (agf::ops::cpu::bf16_kernel() == Bf16Kernel::none) {
    // Without bf16 arithmetic and without the forced portable kernel, a bf16 product is refused, never slow.
    const ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
    CHECK_THROWS_WITH(agf::ops::matmul(a, b),
                      Catch::Contains("matmul in bf16 on the CPU") && Catch::Contains("AVX512-BF16"));
    CHECK_FALSE(agf::ops::cpu::bf16_unavailable_reason().empty());
  }
}

TEST_CASE("the bf16 kernels are named, and forcing the portable one is scoped", "[ops][gemm][bf16]") {
  using agf::ops::cpu::bf16_kernel;
  using agf::ops::cpu::bf16_kernel_supported;
  const Bf16Kernel chosen = bf16_kernel();
  CHECK(chosen == (bf16_kernel_supported(Bf16Kernel::amx)          ? Bf16Kernel::amx
                   : bf16_kernel_supported(Bf16Kernel::avx512bf16) ? Bf16Kernel::avx512bf16
                                                                   : Bf16Kernel::none));
  {
    const agf::ops::cpu::ForceBf16Kernel portable(agf::ops::cpu::Bf16Kernel::portable);
    CHECK(bf16_kernel() == Bf16Kernel::portable);
    CHECK(agf::ops::cpu::bf16_unavailable_reason().empty());
    // A second force must name the same kernel.
    CHECK_NOTHROW(agf::ops::cpu::ForceBf16Kernel(Bf16Kernel::portable));
    if (bf16_kernel_supported(Bf16Kernel::avx512bf16)) {
      CHECK_THROWS_WITH(agf::ops::cpu::ForceBf16Kernel(Bf16Kernel::avx512bf16), Catch::Contains("already is"));
    }
    CHECK(bf16_kernel() == Bf16Kernel::portable);
  }
  CHECK(bf16_kernel() == chosen);
  for (const Bf16Kernel kernel : {Bf16Kernel::avx512bf16, Bf16Kernel::amx}) {
    if (!bf16_kernel_supported(kernel)) {
      CHECK_THROWS_WITH(agf::ops::cpu::ForceBf16Kernel(kernel), Catch::Contains("cannot run on this processor"));
    }
  }
  CHECK_FALSE(bf16_kernel_supported(Bf16Kernel::none));
  CHECK_THAT(agf::ops::cpu::bf16_kernel_name(Bf16Kernel::avx512bf16), Catch::StartsWith("avx512bf16"));
  CHECK_THAT(agf::ops::cpu::bf16_kernel_name(Bf16Kernel::amx), Catch::StartsWith("amx"));
  CHECK_THAT(agf::ops::cpu::bf16_kernel_name(Bf16Kernel::portable), Catch::Contains("slow"));
  for (const Bf16Kernel kernel : agf::ops::cpu::kBf16Kernels) {
    CHECK(agf::ops::cpu::parse_bf16_kernel(agf::ops::cpu::bf16_kernel_flag(kernel)) == kernel);
    CHECK_THAT(agf::ops::cpu::bf16_kernel_name(kernel),
               Catch::StartsWith(agf::ops::cpu::bf16_kernel_flag(kernel) + " ("));
  }
  CHECK_FALSE(agf::ops::cpu::parse_bf16_kernel("avx2").has_value());
  CHECK_FALSE(agf::ops::cpu::parse_bf16_kernel("none").has_value());
  CHECK(agf::ops::cpu::bf16_kernel_flags() == std::vector<std::string>{"portable", "avx512bf16", "amx"});
}

TEST_CASE("f64 gradchecks of matmul pass under MatmulPrecision::bf16", "[ops][matmul][bf16][gradcheck]") {
  // bf16 applies to f32 products only: a gradcheck (central differences in f64) is unaffected.
  const agf::ops::cpu::ForceBf16Kernel portable(agf::ops::cpu::Bf16Kernel::portable);
  const agf::ops::cpu::ScopedMatmulPrecision bf16(agf::ops::cpu::MatmulPrecision::bf16);
  for (const char* name : {"matmul", "matmul_transposed", "matmul_batched", "matmul_vector"}) {
    INFO(name);
    const agf::OpCheck* check = agf::find_op_check(name);
    REQUIRE(check != nullptr);
    CHECK(check->run().passed);
  }
}

TEST_CASE("the matmul precision is a setting of the calling thread, restored by each scope", "[ops][matmul][bf16]") {
  using agf::ops::cpu::matmul_precision;
  using agf::ops::cpu::MatmulPrecision;
  using agf::ops::cpu::ScopedMatmulPrecision;
  const ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
  MatmulPrecision elsewhere = MatmulPrecision::bf16;
  std::thread([&] { elsewhere = matmul_precision(); }).join();
  CHECK(elsewhere == MatmulPrecision::f32);  // another thread (another run) keeps its own
  {
    const ScopedMatmulPrecision f32(MatmulPrecision::f32);
    CHECK(matmul_precision() == MatmulPrecision::f32);
  }
  CHECK(matmul_precision() == MatmulPrecision::bf16);
}
