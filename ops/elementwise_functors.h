#pragma once
// The formula of every pointwise op, written once for both backends.
//
// Each functor is a host/device function object whose call operator is a template over the compute type
// T. The CPU's map_elements (ops/cpu/map_elements.h) calls it with T = the tensor's element type (float
// or double); the CUDA map kernel (ops/cuda/map_kernel.cuh) calls it with T = acc_t of the element type
// (float for f16/bf16/f32, double for f64), loading each operand into T and rounding the result once.
// Ops with a scalar carry it as a member (a double, converted to T where it is used, as every op did).
//
// Plain C++ and <cmath> only: nvcc compiles these in device code (std::exp, log, sqrt, tanh, erf and
// pow on float and double are device functions there), so no fmt, Tensor or Eigen may be included.
#include <cmath>
#include <numbers>

#include "core/host_device.h"

namespace agf::ops::functors {

// Constants, as doubles converted to T at use. (nvcc lets device code read namespace-scope constexpr
// scalars like these.)
inline constexpr double kSqrt2OverPi = 0.79788456080286535588;  // √(2/π)
inline constexpr double kGeluCubic = 0.044715;
inline constexpr double kInvSqrt2 = std::numbers::sqrt2 / 2;                                 // 1/√2
inline constexpr double kInvSqrt2Pi = 0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2;  // 1/√(2π)

// clang-format off
// ---- binary ----------------------------------------------------------------------------------------

struct Add {
  template <class T> AGF_HOST_DEVICE T operator()(T a, T b) const { return a + b; }
};
struct Sub {
  template <class T> AGF_HOST_DEVICE T operator()(T a, T b) const { return a - b; }
};
struct Mul {
  template <class T> AGF_HOST_DEVICE T operator()(T a, T b) const { return a * b; }
};
struct Div {
  template <class T> AGF_HOST_DEVICE T operator()(T a, T b) const { return a / b; }
};
// d(a/b)/db = -a/b², times the output gradient g.
struct DivBackwardDivisor {
  template <class T> AGF_HOST_DEVICE T operator()(T g, T a, T b) const { return -g * a / (b * b); }
};

// ---- with a scalar ---------------------------------------------------------------------------------

struct AddScalar {
  double value;
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return x + static_cast<T>(value); }
};
struct MulScalar {
  double value;
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return x * static_cast<T>(value); }
};
struct RsubScalar {  // value - x
  double value;
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return static_cast<T>(value) - x; }
};
struct RdivScalar {  // value / x
  double value;
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return static_cast<T>(value) / x; }
};
struct PowScalar {
  double exponent;
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return std::pow(x, static_cast<T>(exponent)); }
};
// d(x^p)/dx = p·x^(p-1), times g.
struct PowScalarBackward {
  double exponent;
  template <class T> AGF_HOST_DEVICE T operator()(T g, T x) const {
    return g * static_cast<T>(exponent) * std::pow(x, static_cast<T>(exponent - 1));
  }
};

// ---- unary -----------------------------------------------------------------------------------------

struct Neg {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return -x; }
};
struct Exp {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return std::exp(x); }
};
struct Log {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return std::log(x); }
};
struct Sqrt {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return std::sqrt(x); }
};
struct Tanh {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return std::tanh(x); }
};
struct Sigmoid {  // 1/(1 + e^-x)
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return T(1) / (T(1) + std::exp(-x)); }
};
struct Relu {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return x > 0 ? x : T(0); }
};
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
struct GeluTanh {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const {
    return T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x)));
  }
};
// x·Φ(x) = 0.5·x·(1 + erf(x/√2))
struct GeluErf {
  template <class T> AGF_HOST_DEVICE T operator()(T x) const { return T(0.5) * x * (T(1) + std::erf(x * T(kInvSqrt2))); }
};

// ---- backward of the unary ops: (g, saved) -> g · dy/dx --------------------------------------------
// exp and log need none of their own: exp_backward = g·y (Mul), log_backward = g/x (Div).

struct SqrtBackward {  // y = √x: g/(2y)
  template <class T> AGF_HOST_DEVICE T operator()(T g, T y) const { return g / (T(2) * y); }
};
struct TanhBackward {  // y = tanh x: g·(1 - y²)
  template <class T> AGF_HOST_DEVICE T operator()(T g, T y) const { return g * (T(1) - y * y); }
};
struct SigmoidBackward {  // y = σ(x): g·y·(1 - y)
  template <class T> AGF_HOST_DEVICE T operator()(T g, T y) const { return g * y * (T(1) - y); }
};
struct ReluBackward {  // g·[x > 0]
  template <class T> AGF_HOST_DEVICE T operator()(T g, T x) const { return x > 0 ? g : T(0); }
};
// u = √(2/π)(x + c·x³), t = tanh(u):  d/dx [x(1+t)/2] = (1+t)/2 + x(1-t²)/2 · √(2/π)(1 + 3c·x²)
struct GeluTanhBackward {
  template <class T> AGF_HOST_DEVICE T operator()(T g, T x) const {
    const T t = std::tanh(T(kSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x));
    const T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * x * x);
    return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
  }
};
// d/dx [x·Φ(x)] = Φ(x) + x·φ(x),  φ(x) = exp(-x²/2)/√(2π)
struct GeluErfBackward {
  template <class T> AGF_HOST_DEVICE T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + std::erf(x * T(kInvSqrt2)));
    const T pdf = std::exp(T(-0.5) * x * x) * T(kInvSqrt2Pi);
    return g * (cdf + x * pdf);
  }
};

// ---- the backward of max (ops/cpu/reduce.cpp) ------------------------------------------------------
// The gradient of a max goes to every element equal to the maximum, shared equally among the ties:
// is_max = [x == max], ties = Σ is_max over the reduced axes, dx = is_max · g / ties.

struct IsMax {
  template <class T> AGF_HOST_DEVICE T operator()(T x, T max) const { return x == max ? T(1) : T(0); }
};
struct ShareAmongTies {
  template <class T> AGF_HOST_DEVICE T operator()(T is_max, T g, T ties) const { return is_max * g / ties; }
};
// clang-format on

}  // namespace agf::ops::functors
