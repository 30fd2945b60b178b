#pragma once
// The one CPU GEMM behind every host matrix product (ops::matmul, and so Linear and the model's output
// projection):  C [m, n] (row-major, row stride ldc) = A [m, k] · B [k, n],  each of A and B read in place
// as a row-major or a column-major matrix (ops/matmul_plan.h, gemm_operand).
//
// Built with OpenBLAS (its OpenMP variant: the same thread pool as agf's own loops, single-threaded when
// called inside one) when CMake finds it, Eigen's GEMM otherwise. OpenBLAS picks its kernels at run time
// for the processor at hand; measured against Eigen and BLIS in docs/cpu-speed.md.
#include <cstdint>
#include <string>

namespace agf::ops::cpu {

// One operand: `data` holds element (i, j) at data[i·ld + j] when row-major, data[j·ld + i] when column-major.
template <class T>
struct GemmMatrix {
  const T* data = nullptr;
  int64_t ld = 1;
  bool column_major = false;
};

// C = A·B for f32 and f64. m, n, k may be 0 (k = 0 gives zeros). With OpenBLAS, every extent and leading
// dimension must fit its 32-bit blasint (checked: an error names the product, never a silent wrap).
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c, int64_t ldc);

// The same product with Eigen's GEMM: what gemm runs in a build without OpenBLAS, and in every build, so that
// the tests check it against the triple loop even where OpenBLAS does the work. Same preconditions.
template <class T>
void eigen_gemm(int64_t m, int64_t n, int64_t k, GemmMatrix<T> a, GemmMatrix<T> b, T* c, int64_t ldc);

// Which library does the work, and for which processor: "OpenBLAS (Zen; OpenBLAS 0.3.21 DYNAMIC_ARCH ...)"
// (its kernel, then its build configuration) or "Eigen 3.4.0".
std::string gemm_library();

}  // namespace agf::ops::cpu
