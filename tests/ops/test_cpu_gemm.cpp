// ops/cpu/gemm.h (OpenBLAS or Eigen, and the Eigen fallback on its own) against the triple loop in f64, for every operand layout, padded
// leading dimensions, shapes large enough for the library's blocking and packing, and the empty cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/random.h"
#include "ops/cpu/gemm.h"
#include "ops/matmul.h"
#include "tests/ops/stored_matrix.h"

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
      worst = std::max(worst, std::abs(static_cast<double>(c[i * ldc + j]) - expected));
    }
    for (int64_t j = n; j < ldc; ++j) REQUIRE(c[i * ldc + j] == T(7));
  }
  INFO("m " << m << " n " << n << " k " << k << " a column-major " << a_column << " b column-major " << b_column);
  // |a|, |b| <= 1: each output sums k products of size <= 1, so the rounding error is below k·u·(a few)
  CHECK(worst <= tolerance * static_cast<double>(std::max<int64_t>(k, 1)));
}

}  // namespace

TEST_CASE("the CPU GEMM and its Eigen fallback equal the triple loop for every layout, in f32 and f64",
          "[ops][matmul][gemm]") {
  INFO(agf::ops::cpu::gemm_library());
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 1, 1}, {1, 37, 19}, {29, 1, 64}, {67, 300, 129}, {300, 67, 257}};
  for (const auto& [m, n, k] : shapes) {
    for (bool a_column : {false, true}) {
      for (bool b_column : {false, true}) {
        check_gemm<double>(agf::ops::cpu::gemm<double>, m, n, k, a_column, b_column, 1e-15);
        check_gemm<float>(agf::ops::cpu::gemm<float>, m, n, k, a_column, b_column, 2e-7);
        check_gemm<double>(agf::ops::cpu::eigen_gemm<double>, m, n, k, a_column, b_column, 1e-15);
        check_gemm<float>(agf::ops::cpu::eigen_gemm<float>, m, n, k, a_column, b_column, 2e-7);
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

TEST_CASE("the CPU GEMM names its library", "[ops][matmul][gemm]") {
  const std::string library = agf::ops::cpu::gemm_library();
#ifdef AGF_WITH_OPENBLAS
  CHECK_THAT(library, Catch::StartsWith("OpenBLAS"));
#else
  CHECK_THAT(library, Catch::StartsWith("Eigen"));
#endif
}
