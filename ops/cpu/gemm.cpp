// ops/cpu/gemm.h: OpenBLAS's cblas_?gemm (AGF_WITH_OPENBLAS), oneDNN's dnnl_sgemm (AGF_WITH_ONEDNN) and Eigen's
// GEMM (always built), and the choice among them.
#include "ops/cpu/gemm.h"

#include <fmt/core.h>

#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/enum_flags.h"
#include "core/error.h"
#include "core/forced_choice.h"

#ifdef AGF_WITH_OPENBLAS
#include <cblas.h>
#endif
#ifdef AGF_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace agf::ops::cpu {

namespace {

ForcedChoice<GemmLibrary> forced_library;

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

template <class T>
void checked_blas_gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c, int64_t ldc) {
  constexpr int64_t kBlasMax = std::numeric_limits<blasint>::max();
  AGF_CHECK(std::max({m, n, k, a.ld, b.ld, ldc}) <= kBlasMax,
            "matmul: [{}, {}] @ [{}, {}] (leading dimensions {}, {}, {}) exceeds OpenBLAS's 32-bit sizes", m, k, k, n,
            a.ld, b.ld, ldc);
  blas_gemm(m, n, k, a, b, c, ldc);
}
#endif

#ifdef AGF_WITH_ONEDNN
// dnnl_sgemm takes row-major matrices, 64-bit sizes, and op(X) = Xᵀ for 'T', as row-major CBLAS does.
void onednn_gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<float> a, GemmMatrix<float> b, float* c, int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(a.column_major ? 'T' : 'N', b.column_major ? 'T' : 'N', m, n, k, 1.0f, a.data,
                                          a.ld, b.data, b.ld, 0.0f, c, ldc);
  AGF_CHECK(status == dnnl_success, "matmul: oneDNN's dnnl_sgemm failed (status {}) on [{}, {}] @ [{}, {}]",
            static_cast<int>(status), m, k, k, n);
}

std::string onednn_isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return fmt::format("isa {:#x}", static_cast<unsigned>(isa));
  }
}
#endif

template <class T, int Order>
using ConstMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, 0, Eigen::OuterStride<>>;

template <class T, int Order>
ConstMap<T, Order> map(GemmMatrix<T> x, int64_t rows, int64_t cols) {
  return ConstMap<T, Order>(x.data, rows, cols, Eigen::OuterStride<>(x.ld));
}

// Eigen's GEMM, mapping each operand in its order.
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

bool is_intel_processor() {
  static const bool intel = __builtin_cpu_is("intel");
  return intel;
}

}  // namespace

bool gemm_library_built(GemmLibrary library) {
  switch (library) {
    case GemmLibrary::eigen: return true;
#ifdef AGF_WITH_OPENBLAS
    case GemmLibrary::openblas: return true;
#endif
#ifdef AGF_WITH_ONEDNN
    case GemmLibrary::onednn: return true;
#endif
    default: return false;
  }
}

template <class T>
bool gemm_library_computes(GemmLibrary library) {
  return gemm_library_built(library) && (library != GemmLibrary::onednn || std::is_same_v<T, float>);
}

template <class T>
GemmLibrary gemm_library_for() {
  if constexpr (std::is_same_v<T, float>) {
    if (const std::optional<GemmLibrary> forced = forced_library.forced()) return *forced;
    if (is_intel_processor() && gemm_library_built(GemmLibrary::onednn)) return GemmLibrary::onednn;
  }
  return gemm_library_built(GemmLibrary::openblas) ? GemmLibrary::openblas : GemmLibrary::eigen;
}

std::string gemm_library_flag(GemmLibrary library) {
  switch (library) {
    case GemmLibrary::eigen: return "eigen";
    case GemmLibrary::openblas: return "openblas";
    case GemmLibrary::onednn: return "onednn";
  }
  return "?";
}

std::vector<std::string> gemm_library_flags() { return enum_flags(kGemmLibraries, gemm_library_flag); }

std::optional<GemmLibrary> parse_gemm_library(const std::string& flag) {
  return parse_enum_flag(kGemmLibraries, gemm_library_flag, flag);
}

std::string gemm_library_name(GemmLibrary library) {
  const std::string flag = gemm_library_flag(library);
  if (!gemm_library_built(library)) return flag;
  switch (library) {
    case GemmLibrary::eigen:
      return fmt::format("{} (Eigen {}.{}.{})", flag, EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
    case GemmLibrary::openblas:
#ifdef AGF_WITH_OPENBLAS
      return fmt::format("{} (OpenBLAS, {} kernels; {})", flag, openblas_get_corename(), openblas_get_config());
#endif
      break;
    case GemmLibrary::onednn: {
#ifdef AGF_WITH_ONEDNN
      const dnnl_version_t* version = dnnl_version();
      return fmt::format("{} (oneDNN {}.{}.{}, {})", flag, version->major, version->minor, version->patch,
                         onednn_isa_name(dnnl_get_effective_cpu_isa()));
#endif
      break;
    }
  }
  return flag;
}

template <class T>
std::string gemm_library() {
  return gemm_library_name(gemm_library_for<T>());
}

ForceGemmLibrary::ForceGemmLibrary(GemmLibrary library) {
  AGF_CHECK(gemm_library_built(library), "the GEMM library '{}' is not in this build of agf",
            gemm_library_flag(library));
  forced_library.begin(library, "the GEMM library", gemm_library_flag);
}
ForceGemmLibrary::~ForceGemmLibrary() { forced_library.end(); }

template <class T>
void gemm_with(GemmLibrary library, int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c,
               int64_t ldc) {
  AGF_CHECK(gemm_library_built(library), "matmul: the GEMM library '{}' is not in this build of agf",
            gemm_library_flag(library));
  AGF_CHECK(gemm_library_computes<T>(library), "matmul: the GEMM library '{}' has no {} product",
            gemm_library_flag(library), std::is_same_v<T, float> ? "f32" : "f64");
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  switch (library) {
    case GemmLibrary::eigen: eigen_gemm(m, n, k, a, b, c, ldc); return;
    case GemmLibrary::openblas:
#ifdef AGF_WITH_OPENBLAS
      checked_blas_gemm(m, n, k, a, b, c, ldc);
#endif
      return;
    case GemmLibrary::onednn:
#ifdef AGF_WITH_ONEDNN
      if constexpr (std::is_same_v<T, float>) onednn_gemm(m, n, k, a, b, c, ldc);
#endif
      return;
  }
}

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c, int64_t ldc) {
  gemm_with(gemm_library_for<T>(), m, n, k, a, b, c, ldc);
}

template GemmLibrary gemm_library_for<float>();
template GemmLibrary gemm_library_for<double>();
template std::string gemm_library<float>();
template std::string gemm_library<double>();
template bool gemm_library_computes<float>(GemmLibrary);
template bool gemm_library_computes<double>(GemmLibrary);
template void gemm_with<float>(GemmLibrary, int64_t, int64_t, int64_t, GemmMatrix<float>, GemmMatrix<float>, float*,
                               int64_t);
template void gemm_with<double>(GemmLibrary, int64_t, int64_t, int64_t, GemmMatrix<double>, GemmMatrix<double>, double*,
                                int64_t);
template void gemm<float>(int64_t, int64_t, int64_t, GemmMatrix<float>, GemmMatrix<float>, float*, int64_t);
template void gemm<double>(int64_t, int64_t, int64_t, GemmMatrix<double>, GemmMatrix<double>, double*, int64_t);

}  // namespace agf::ops::cpu
