// ops/cpu/gemm.h: each GEMM library this build has (Eigen, OpenBLAS, oneDNN) against the triple loop in f64, for
// every operand layout, padded leading dimensions, shapes large enough for the library's blocking and packing, and
// the empty cases; the choice of library, and forcing another.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/random.h"
#include "ops/cpu/gemm.h"
#include "ops/matmul.h"
#include "tests/ops/stored_matrix.h"

using agf::ops::cpu::GemmLibrary;
using agf::ops::cpu::GemmMatrix;

namespace {

template <class T, class Gemm>
void check_gemm(Gemm gemm, int64_t m, int64_t n, int64_t k, bool a_column, bool b_column, double tolerance) {
  agf::test::StoredMatrix<T> a(m, k, a_column, 3, 1), b(k, n, b_column, 5, 2);
  const int64_t ldc = n + 2;
  std::vector<T> c(static_cast<std::size_t>(m * ldc), T(7));  // the padding must survive
  gemm(m, n, k, a.view(), b.view(), c.data(), ldc);
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double expected = 0;
      for (int64_t p = 0; p < k; ++p) expected += static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j));
      worst = agf::test::worse_of(worst, std::abs(static_cast<double>(c[i * ldc + j]) - expected));
    }
    for (int64_t j = n; j < ldc; ++j) REQUIRE(c[i * ldc + j] == T(7));
  }
  INFO("m " << m << " n " << n << " k " << k << " a column-major " << a_column << " b column-major " << b_column);
  // |a|, |b| <= 1: each output sums k products of size <= 1, so the rounding error is below k·u·(a few)
  CHECK(worst <= tolerance * static_cast<double>(std::max<int64_t>(k, 1)));
}

}  // namespace

TEST_CASE("every GEMM library of the build equals the triple loop for every layout, in f32 and f64",
          "[ops][matmul][gemm]") {
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 1, 1}, {1, 37, 19}, {29, 1, 64}, {67, 300, 129}, {300, 67, 257}};
  for (const GemmLibrary library : agf::ops::cpu::kGemmLibraries) {
    INFO(agf::ops::cpu::gemm_library_name(library));
    const auto gemm_f32 = [library](auto... args) { agf::ops::cpu::gemm_with<float>(library, args...); };
    const auto gemm_f64 = [library](auto... args) { agf::ops::cpu::gemm_with<double>(library, args...); };
    for (const auto& [m, n, k] : shapes) {
      for (bool a_column : {false, true}) {
        for (bool b_column : {false, true}) {
          if (agf::ops::cpu::gemm_library_computes<double>(library)) {
            check_gemm<double>(gemm_f64, m, n, k, a_column, b_column, 1e-15);
          }
          if (agf::ops::cpu::gemm_library_computes<float>(library)) {
            check_gemm<float>(gemm_f32, m, n, k, a_column, b_column, 2e-7);
          }
        }
      }
    }
  }
#ifdef AGF_WITH_OPENBLAS
  CHECK(agf::ops::cpu::gemm_library_computes<double>(GemmLibrary::openblas));
#endif
#ifdef AGF_WITH_ONEDNN
  CHECK(agf::ops::cpu::gemm_library_computes<float>(GemmLibrary::onednn));
  CHECK_FALSE(agf::ops::cpu::gemm_library_computes<double>(GemmLibrary::onednn));  // dnnl_sgemm only
#endif
  // gemm itself, on the processor's library
  check_gemm<float>(agf::ops::cpu::gemm<float>, 300, 67, 257, true, false, 2e-7);
  check_gemm<double>(agf::ops::cpu::gemm<double>, 300, 67, 257, false, true, 1e-15);
}

TEST_CASE("every GEMM library carries a nan or an inf of A into its row of C", "[ops][matmul][gemm]") {
  // A diverging step must show in its loss and gradients (the loss scaler and the gradient-norm check read
  // them), so no library may drop a nan or inf operand; the other rows stay finite.
  for (const GemmLibrary library : agf::ops::cpu::kGemmLibraries) {
    if (!agf::ops::cpu::gemm_library_computes<float>(library)) continue;
    INFO(agf::ops::cpu::gemm_library_name(library));
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      const int64_t m = 96, n = 80, k = 300;
      agf::test::StoredMatrix<float> a(m, k, false, 0, 3), b(k, n, true, 0, 5);
      a.at(41, 123) = bad;
      std::vector<float> c(static_cast<std::size_t>(m * n));
      agf::ops::cpu::gemm_with<float>(library, m, n, k, a.view(), b.view(), c.data(), n);
      int64_t not_finite_in_row = 0, not_finite_elsewhere = 0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j)
          (i == 41 ? not_finite_in_row : not_finite_elsewhere) += !std::isfinite(c[i * n + j]);
      }
      CHECK(not_finite_in_row == n);
      CHECK(not_finite_elsewhere == 0);
    }
  }
}

TEST_CASE("each GEMM library gives the same bits for the same product, call after call", "[ops][matmul][gemm]") {
  // Resume is exact only if a product repeats exactly: no library may sum in an order that varies between calls
  // (oneDNN and OpenBLAS split k across threads for some shapes; the sum of the parts must keep its order).
  for (const GemmLibrary library : agf::ops::cpu::kGemmLibraries) {
    if (!agf::ops::cpu::gemm_library_computes<float>(library)) continue;
    INFO(agf::ops::cpu::gemm_library_name(library));
    for (const auto& [m, n, k] :
         std::vector<std::array<int64_t, 3>>{{256, 256, 1536}, {1536, 256, 256}, {64, 64, 4096}}) {
      agf::test::StoredMatrix<float> a(m, k, true, 3, 1), b(k, n, false, 5, 2);
      std::vector<float> first(static_cast<std::size_t>(m * n)), again(first.size());
      agf::ops::cpu::gemm_with<float>(library, m, n, k, a.view(), b.view(), first.data(), n);
      for (int repeat = 0; repeat < 3; ++repeat) {
        agf::ops::cpu::gemm_with<float>(library, m, n, k, a.view(), b.view(), again.data(), n);
        CHECK(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("the CPU GEMM with an empty inner dimension writes zeros, and with no output writes nothing",
          "[ops][matmul][gemm]") {
  std::vector<float> c(6, 5.0f);
  const float none = 0;
  agf::ops::cpu::gemm<float>(2, 3, 0, {&none, 1, false}, {&none, 3, false}, c.data(), 3);
  CHECK(c == std::vector<float>(6, 0.0f));
  std::vector<float> untouched(4, 5.0f);
  agf::ops::cpu::gemm<float>(0, 4, 2, {&none, 2, false}, {&none, 4, false}, untouched.data(), 4);
  CHECK(untouched == std::vector<float>(4, 5.0f));
  CHECK(agf::ops::matmul(agf::Tensor::zeros({2, 0}, agf::DType::f32), agf::Tensor::zeros({0, 3}, agf::DType::f32))
            .to_double_vector() == std::vector<double>(6, 0.0));
}

TEST_CASE("the f32 GEMM runs on the processor's library, and another can be forced", "[ops][matmul][gemm]") {
  using agf::ops::cpu::gemm_library_for;
  const GemmLibrary chosen = gemm_library_for<float>();
  INFO(agf::ops::cpu::gemm_library());
  // oneDNN on an Intel processor, else OpenBLAS, each where built, else Eigen
  using agf::ops::cpu::gemm_library_built;
  const bool intel = __builtin_cpu_is("intel");
  CHECK(chosen == (intel && gemm_library_built(GemmLibrary::onednn) ? GemmLibrary::onednn
                   : gemm_library_built(GemmLibrary::openblas)      ? GemmLibrary::openblas
                                                                    : GemmLibrary::eigen));
  CHECK_THAT(agf::ops::cpu::gemm_library(), Catch::StartsWith(agf::ops::cpu::gemm_library_name(chosen)));
  const GemmLibrary f64_library = gemm_library_built(GemmLibrary::openblas) ? GemmLibrary::openblas
                                                                            : GemmLibrary::eigen;
  CHECK(gemm_library_for<double>() == f64_library);
  CHECK_THAT(agf::ops::cpu::gemm_library<double>(), Catch::StartsWith(agf::ops::cpu::gemm_library_flag(f64_library)));
  float none = 0;
  for (const GemmLibrary library : agf::ops::cpu::kGemmLibraries) {
    const std::string flag = agf::ops::cpu::gemm_library_flag(library);
    CHECK(agf::ops::cpu::parse_gemm_library(flag) == library);
    CHECK_THAT(agf::ops::cpu::gemm_library_name(library), Catch::StartsWith(flag));
    if (!gemm_library_built(library)) {
      CHECK_THROWS_WITH(agf::ops::cpu::ForceGemmLibrary(library),
                        Catch::Contains("'" + flag + "' is not in this build"));
      CHECK_THROWS_WITH(agf::ops::cpu::gemm_with<float>(library, 1, 1, 1, {&none}, {&none}, &none, 1),
                        Catch::Contains("'" + flag + "' is not in this build"));
      continue;
    }
    {
      const agf::ops::cpu::ForceGemmLibrary forced(library), again(library);  // the same one twice: allowed
      CHECK(gemm_library_for<float>() == library);
      CHECK(gemm_library_for<double>() == f64_library);  // f64 products are not forced
      check_gemm<float>(agf::ops::cpu::gemm<float>, 67, 300, 129, false, true, 2e-7);
      for (const GemmLibrary other : agf::ops::cpu::kGemmLibraries) {
        if (other == library || !gemm_library_built(other)) continue;
        CHECK_THROWS_WITH(agf::ops::cpu::ForceGemmLibrary(other),
                          Catch::Contains("'" + agf::ops::cpu::gemm_library_flag(other) + "' is forced while '" + flag +
                                          "' already is"));
      }
    }
    CHECK(gemm_library_for<float>() == chosen);
  }
  if (gemm_library_built(GemmLibrary::onednn)) {
    double none64 = 0;
    CHECK_THROWS_WITH(agf::ops::cpu::gemm_with<double>(GemmLibrary::onednn, 1, 1, 1, {&none64}, {&none64}, &none64, 1),
                      Catch::Contains("'onednn' has no f64 product"));
  }
  CHECK_FALSE(agf::ops::cpu::parse_gemm_library("mkl"));
  CHECK_FALSE(agf::ops::cpu::parse_gemm_library("OpenBLAS"));
  CHECK(agf::ops::cpu::gemm_library_flags() == std::vector<std::string>{"eigen", "openblas", "onednn"});
}
