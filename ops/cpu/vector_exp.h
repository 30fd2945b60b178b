#pragma once
// The exponentials of softmax-like rows, vectorized: Eigen's packet exp (AVX2/AVX-512 polynomial, within a
// few ulp of std::exp, tests/ops/test_vector_exp.cpp) instead of a scalar libm call per element, and sums
// over several SIMD accumulators. Used by softmax, log-softmax, cross-entropy and the attention kernel.
#include <Eigen/Core>
#include <cstdint>
#include <limits>

namespace agf::ops::cpu {

template <class T>
using ConstRow = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using Row = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// max_i x[i]; -inf for an empty row.
template <class T>
T row_max(const T* x, int64_t length) {
  return length > 0 ? ConstRow<T>(x, length).maxCoeff() : -std::numeric_limits<T>::infinity();
}

// exp(x - shift), elementwise, with exp(-inf) = 0 exactly: Eigen's packet exp clamps its argument and
// returns a denormal (≈ 3e-39 in f32) for -inf, so a masked score would get a little probability.
template <class T>
auto exp_of_shifted(const T* x, T shift, int64_t length) {
  const auto shifted = ConstRow<T>(x, length) - shift;
  return (shifted == -std::numeric_limits<T>::infinity()).select(T(0), shifted.exp());
}

// out[i] = exp(x[i] - shift) for i < length, and Σ_i out[i]. `out` may be `x`.
template <class T>
T exp_shifted(const T* x, T shift, T* out, int64_t length) {
  if (length == 0) return T(0);
  Row<T> y(out, length);
  y = exp_of_shifted(x, shift, length);
  return y.sum();
}

// Σ_i exp(x[i] - shift), nothing stored.
template <class T>
T sum_exp_shifted(const T* x, T shift, int64_t length) {
  if (length == 0) return T(0);
  return exp_of_shifted(x, shift, length).sum();
}

}  // namespace agf::ops::cpu
