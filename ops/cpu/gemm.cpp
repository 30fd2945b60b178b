// ops/cpu/gemm.h: OpenBLAS's cblas_?gemm when the build has it (AGF_WITH_OPENBLAS), else Eigen (always built).
#include "ops/cpu/gemm.h"

#include <fmt/core.h>

#include <Eigen/Core>
#include <algorithm>
#include <limits>

#include "core/error.h"

#ifdef AGF_WITH_OPENBLAS
#include <cblas.h>
#endif

namespace agf::ops::cpu {

namespace {

#ifdef AGF_WITH_OPENBLAS
CBLAS_TRANSPOSE blas_transpose(bool column_major) { return column_major ? CblasTrans : CblasNoTrans; }

// Row-major BLAS: a row-major operand is passed as is (NoTrans, ld = its row stride); a column-major one is
// the transpose of the row-major matrix its memory holds (Trans, ld = its column stride).
void blas_gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<float> a, GemmMatrix<float> b, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, blas_transpose(a.column_major), blas_transpose(b.column_major), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a.data, static_cast<blasint>(a.ld), b.data,
              static_cast<blasint>(b.ld), 0.0f, c, static_cast<blasint>(ldc));
}
void blas_gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<double> a, GemmMatrix<double> b, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, blas_transpose(a.column_major), blas_transpose(b.column_major), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a.data, static_cast<blasint>(a.ld), b.data,
              static_cast<blasint>(b.ld), 0.0, c, static_cast<blasint>(ldc));
}
#endif

template <class T, int Order>
using ConstMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, 0, Eigen::OuterStride<>>;

template <class T, int Order>
ConstMap<T, Order> map(GemmMatrix<T> x, int64_t rows, int64_t cols) {
  return ConstMap<T, Order>(x.data, rows, cols, Eigen::OuterStride<>(x.ld));
}

}  // namespace

template <class T>
void eigen_gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c, int64_t ldc) {
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0, Eigen::OuterStride<>> out(
      c, m, n, Eigen::OuterStride<>(ldc));
  constexpr int R = Eigen::RowMajor, C = Eigen::ColMajor;
  if (!a.column_major && !b.column_major) out.noalias() = map<T, R>(a, m, k) * map<T, R>(b, k, n);
  if (!a.column_major && b.column_major) out.noalias() = map<T, R>(a, m, k) * map<T, C>(b, k, n);
  if (a.column_major && !b.column_major) out.noalias() = map<T, C>(a, m, k) * map<T, R>(b, k, n);
  if (a.column_major && b.column_major) out.noalias() = map<T, C>(a, m, k) * map<T, C>(b, k, n);
}

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
#ifdef AGF_WITH_OPENBLAS
  constexpr int64_t kBlasMax = std::numeric_limits<blasint>::max();
  AGF_CHECK(std::max({m, n, k, a.ld, b.ld, ldc}) <= kBlasMax,
            "matmul: [{}, {}] @ [{}, {}] (leading dimensions {}, {}, {}) exceeds OpenBLAS's 32-bit sizes", m, k, k, n,
            a.ld, b.ld, ldc);
  blas_gemm(m, n, k, a, b, c, ldc);
#else
  eigen_gemm(m, n, k, a, b, c, ldc);
#endif
}

template void gemm<float>(int64_t, int64_t, int64_t, GemmMatrix<float>, GemmMatrix<float>, float*, int64_t);
template void gemm<double>(int64_t, int64_t, int64_t, GemmMatrix<double>, GemmMatrix<double>, double*, int64_t);
template void eigen_gemm<float>(int64_t, int64_t, int64_t, GemmMatrix<float>, GemmMatrix<float>, float*, int64_t);
template void eigen_gemm<double>(int64_t, int64_t, int64_t, GemmMatrix<double>, GemmMatrix<double>, double*, int64_t);

std::string gemm_library() {
#ifdef AGF_WITH_OPENBLAS
  return fmt::format("OpenBLAS ({}; {})", openblas_get_corename(), openblas_get_config());
#else
  return fmt::format("Eigen {}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
#endif
}

}  // namespace agf::ops::cpu
