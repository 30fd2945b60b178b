#pragma once
// How random words become values: one formula per distribution, compiled for the CPU and for CUDA
// kernels (AGF_HOST_DEVICE), so a seed gives the same numbers on every device (see core/random.h).
//
// Every multiply-add is an explicit fma: a compiler may or may not contract `a·b + c` by itself (g++
// with -march=native does, nvcc does by default, a portable x86-64 build cannot), and a contracted and
// an uncontracted expression round differently. fma is correctly rounded everywhere, so the uniform fill
// is bit-identical on every device and build. Box–Muller also calls log, sin and cos, which glibc and
// CUDA's libdevice do not round identically: a normal value in f64 may differ by a few ulp between the
// CPU and a GPU (sqrt is correctly rounded on both); rounded to f32 or narrower it almost never does.
//
// The math functions are called as ::fma, ::log, …: the C library's (or CUDA's) double functions, never
// agf's own log/sqrt of Tensors and Variables that an including file may have declared.
#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "core/philox.h"

namespace agf {

// 2π rounded to double (= 2.0 * std::numbers::pi, exactly: doubling is exact).
inline constexpr double kTwoPi = 6.283185307179586;

// low + (high - low)·u, u = uniform_from_bits(bits) ∈ [0, 1), rounded once.
AGF_HOST_DEVICE inline double uniform_value(uint32_t bits, double low, double high) {
  return ::fma(high - low, static_cast<double>(uniform_from_bits(bits)), low);
}

// Box–Muller on the words of one pair of elements (2j, 2j + 1): with u1, u2 ∈ (0, 1],
//   element 2j   = mean + stddev·sqrt(-2 log u1)·cos(2π u2)
//   element 2j+1 = mean + stddev·sqrt(-2 log u1)·sin(2π u2)
// `second` selects element 2j + 1.
AGF_HOST_DEVICE inline double normal_value(uint32_t bits_u1, uint32_t bits_u2, bool second, double mean,
                                           double stddev) {
  const double radius = ::sqrt(-2.0 * ::log(open_uniform_from_bits(bits_u1)));
  const double angle = kTwoPi * open_uniform_from_bits(bits_u2);
  return ::fma(stddev * radius, second ? ::sin(angle) : ::cos(angle), mean);
}

}  // namespace agf
