#pragma once
// Helpers of the GPU tests of the nn ops (softmax, layer_norm, embedding, cross_entropy, dropout,
// random fills, Adam): random inputs, f64 references computed on the CPU from the exact values the GPU
// sees, comparisons scaled to the result, distances in ulp, and the message an op fails with.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "tests/cuda/gpu_test.h"

namespace agf::testing {

inline const std::vector<DType> kFloatingDtypes{DType::f64, DType::f32, DType::f16, DType::bf16};

// A CPU f64 tensor of normal values (mean 0, `scale`), reproducible from `seed`.
inline Tensor random_f64(const Shape& shape, uint64_t seed, double scale = 1.0) {
  Generator generator(seed);
  return normal(shape, generator, 0.0, scale, DType::f64);
}

// x rounded to `dtype` and back: the f64 values a GPU run in `dtype` starts from.
inline Tensor rounded(const Tensor& x, DType dtype) { return x.to(dtype).to(DType::f64); }

// How far a GPU result in `dtype` may be from the f64 reference of its rounded inputs, relative to the
// result's largest magnitude: rounding of the output (half an ulp of f16 is 4.9e-4, of bf16 3.9e-3) plus
// f32 accumulation.
inline double tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64: return 1e-12;
    case DType::f32: return 1e-5;
    case DType::f16: return 4e-3;
    case DType::bf16: return 2e-2;
    default: return 0;
  }
}

// max |x| over the elements of x (any dtype and device); 0 when empty.
inline double max_abs(const Tensor& x) {
  double result = 0;
  for (double value : x.to(Device::cpu()).to_double_vector()) result = std::max(result, std::abs(value));
  return result;
}

// |gpu - reference| <= tol·(|reference| + scale) everywhere, scale = max(max|reference|, `least_scale`) (gpu any
// dtype and device, reference f64 CPU). `least_scale` is the size of the terms the result is computed from, for a
// result that cancels to 0 in exact arithmetic: there the reference holds rounding noise (1e-17), not a scale.
inline void require_near(const Tensor& gpu, const Tensor& reference, double tol, const std::string& what,
                         double least_scale = 0) {
  const double scale = std::max(max_abs(reference), least_scale);
  require_close(gpu.to(Device::cpu()).to(DType::f64), reference, tol, tol * (scale > 0 ? scale : 1.0), what.c_str());
}

// The error message of `call`, or "no error".
template <class Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

// Distance in units in the last place between two values of the same floating type (0 when equal;
// counted across zero through the ordered integer representation).
inline int64_t ulp_distance(float a, float b) {
  auto ordered = [](float x) {
    const int32_t bits = std::bit_cast<int32_t>(x);
    return bits < 0 ? static_cast<int64_t>(INT32_MIN) - bits : static_cast<int64_t>(bits);
  };
  return std::abs(ordered(a) - ordered(b));
}
inline int64_t ulp_distance(double a, double b) {
  auto ordered = [](double x) {
    const int64_t bits = std::bit_cast<int64_t>(x);
    return bits < 0 ? INT64_MIN - bits : bits;
  };
  const int64_t oa = ordered(a), ob = ordered(b);
  return oa > ob ? oa - ob : ob - oa;
}

}  // namespace agf::testing
