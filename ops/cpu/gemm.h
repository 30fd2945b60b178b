#pragma once
// The one CPU GEMM behind every host matrix product (ops::matmul, and so Linear and the model's output
// projection):  C [m, n] (row-major, row stride ldc) = A [m, k] · B [k, n],  each of A and B read in place
// as a row-major or a column-major matrix (ops/matmul_plan.h, gemm_operand).
//
// Three libraries can do the work, each optional but Eigen:
//   openblas  OpenBLAS's cblas_?gemm (its OpenMP variant: the same thread pool as agf's own loops,
//             single-threaded when called inside one); it picks its kernels for the processor at run time.
//   onednn    oneDNN's dnnl_sgemm (f32 only; JIT kernels for the processor, on the same OpenMP pool).
//   eigen     Eigen's GEMM, always built: the fallback, and the tests' second opinion.
// f32 products run on the processor's library (gemm_library_for<float>): oneDNN on Intel processors, OpenBLAS on
// others, each where built, else Eigen. The reason is measurement (docs/cpu-speed.md): on a Sapphire Rapids
// oneDNN ran the model's products 1.0–1.35× faster than OpenBLAS, whose Debian build has no kernel newer than
// SkylakeX; on AMD Zen OpenBLAS ran them at the FMA peak, and oneDNN was not measured there. Nor was either on
// an older Intel processor (Skylake-X, Cooper Lake), where OpenBLAS has kernels of its own: `agf bench matmul
// --gemm-library` is the measurement that would move the rule. f64 products run
// on OpenBLAS where built, else Eigen. Every library gives the same result for the same product on the same
// processor and threads, call after call (resume is exact); two libraries differ in their last bits.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace agf::ops::cpu {

// One operand: `data` holds element (i, j) at data[i·ld + j] when row-major, data[j·ld + i] when column-major.
template <class T>
struct GemmMatrix {
  const T* data = nullptr;
  int64_t ld = 1;
  bool column_major = false;
};

enum class GemmLibrary { eigen, openblas, onednn };
inline constexpr GemmLibrary kGemmLibraries[] = {GemmLibrary::eigen, GemmLibrary::openblas, GemmLibrary::onednn};

// Whether this build has `library` (eigen always), and whether it computes T (onednn: f32 only).
bool gemm_library_built(GemmLibrary library);
template <class T>
bool gemm_library_computes(GemmLibrary library);

// The library gemm<T> runs: for f32 the one a living ForceGemmLibrary names, else the processor's (above); for
// f64 OpenBLAS, else Eigen.
template <class T>
GemmLibrary gemm_library_for();

// "eigen", "openblas" or "onednn": the library's value of `--gemm-library`; all three; and back (nullopt for
// any other name).
std::string gemm_library_flag(GemmLibrary library);
std::vector<std::string> gemm_library_flags();
std::optional<GemmLibrary> parse_gemm_library(const std::string& flag);

// The flag and the library's own words for what it runs here: "openblas (OpenBLAS, SkylakeX kernels; <its
// build configuration>)", "onednn (oneDNN 2.6.3, avx512_core_amx)", "eigen (Eigen 3.4.0)"; the flag alone for
// a library not built.
std::string gemm_library_name(GemmLibrary library);

// gemm_library_name(gemm_library_for<T>()): what `agf bench` prints for its products.
template <class T = float>
std::string gemm_library();

// While one lives (on any thread), gemm_library_for<float>() is `library`, which must be built (an error names it
// otherwise); two alive at once must name the same one. For `agf bench --gemm-library`, which times a library
// other than the processor's.
class ForceGemmLibrary {
 public:
  explicit ForceGemmLibrary(GemmLibrary library);
  ~ForceGemmLibrary();
  ForceGemmLibrary(const ForceGemmLibrary&) = delete;
  ForceGemmLibrary& operator=(const ForceGemmLibrary&) = delete;
};

// C = A·B with the given library, one that gemm_library_computes<T>. m, n, k may be 0 (k = 0 gives zeros).
// Every extent and leading dimension must fit OpenBLAS's 32-bit blasint when it does the work (checked: an
// error names the product, never a silent wrap).
template <class T>
void gemm_with(GemmLibrary library, int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c,
               int64_t ldc);

// C = A·B by gemm_library_for<T>(). Same preconditions.
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c, int64_t ldc);

}  // namespace agf::ops::cpu
