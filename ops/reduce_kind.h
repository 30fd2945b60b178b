#pragma once
// Which reduction a row reduction computes: shared by ops/cpu/reduce.cpp and the CUDA row reduction
// (ops/cuda/reduce_kernels.cu). Plain C++, so nvcc can include it.
#include <cstdint>

namespace agf::ops {

enum class ReduceKind : uint8_t {
  sum,   // Σ x
  mean,  // Σ x / n (NaN for n = 0)
  max,   // the largest x (NaN values are skipped, as std::max(accumulator, x) skips them)
};

}  // namespace agf::ops
