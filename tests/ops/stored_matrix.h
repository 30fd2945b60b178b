#pragma once
// A [rows, cols] test matrix stored row- or column-major with spare elements after each row (column), filled
// with uniform values in [-1, 1): the operands of the GEMM tests (test_cpu_gemm.cpp, test_cpu_gemm_bf16.cpp). The
// spare elements are nan, so that a GEMM that reads past a row (or column) gives nan instead of a sum that
// happens to be right.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/random.h"
#include "ops/cpu/gemm.h"

namespace agf::test {

template <class T>
struct StoredMatrix {
  std::vector<T> memory;
  int64_t rows, cols, ld;
  bool column_major;
  StoredMatrix(int64_t r, int64_t c, bool column, int64_t pad, uint64_t seed) : rows(r), cols(c), column_major(column) {
    ld = (column ? r : c) + pad;
    memory.assign(static_cast<std::size_t>(ld * (column ? c : r)), std::numeric_limits<T>::quiet_NaN());
    agf::Generator generator(seed);
    const std::vector<double> values = agf::uniform({r * c}, generator, -1, 1, agf::DType::f64).to_double_vector();
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) at(i, j) = static_cast<T>(values[i * c + j]);
  }
  T& at(int64_t i, int64_t j) { return memory[column_major ? j * ld + i : i * ld + j]; }
  T at(int64_t i, int64_t j) const { return memory[column_major ? j * ld + i : i * ld + j]; }
  agf::ops::cpu::GemmMatrix<T> view() const { return {memory.data(), ld, column_major}; }
};

// The larger of `worst` and `error`, where nan wins and stays: std::max(worst, nan) is `worst`, so a test that kept
// its worst error with std::max would pass a nan result.
inline double worse_of(double worst, double error) { return std::isnan(worst) || error <= worst ? worst : error; }

}  // namespace agf::test
