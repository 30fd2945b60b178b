// Pointwise ops on the CPU: every one is a lambda handed to map_elements (one loop for all of them).
#include "ops/elementwise.h"

#include <cmath>
#include <numbers>

#include "ops/cpu/map_elements.h"
#include "ops/reduce.h"

namespace agf::ops {

using cpu::map_elements;

// ---- binary ----------------------------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) { return map_elements("add", [](auto x, auto y) { return x + y; }, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return map_elements("sub", [](auto x, auto y) { return x - y; }, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return map_elements("mul", [](auto x, auto y) { return x * y; }, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return map_elements("div", [](auto x, auto y) { return x / y; }, a, b); }

std::pair<Tensor, Tensor> add_backward(const Tensor& grad, const Shape& a_shape, const Shape& b_shape) {
  return {sum_to(grad, a_shape), sum_to(grad, b_shape)};
}

std::pair<Tensor, Tensor> sub_backward(const Tensor& grad, const Shape& a_shape, const Shape& b_shape) {
  return {sum_to(grad, a_shape), neg(sum_to(grad, b_shape))};
}

std::pair<Tensor, Tensor> mul_backward(const Tensor& grad, const Tensor& a, const Tensor& b) {
  return {sum_to(mul(grad, b), a.shape()), sum_to(mul(grad, a), b.shape())};
}

std::pair<Tensor, Tensor> div_backward(const Tensor& grad, const Tensor& a, const Tensor& b) {
  Tensor grad_a = map_elements("div_backward", [](auto g, auto y) { return g / y; }, grad, b);
  Tensor grad_b = map_elements("div_backward", [](auto g, auto x, auto y) { return -g * x / (y * y); }, grad, a, b);
  return {sum_to(grad_a, a.shape()), sum_to(grad_b, b.shape())};
}

// ---- scalar ----------------------------------------------------------------------------------------

Tensor add_scalar(const Tensor& x, double value) {
  return map_elements("add_scalar", [value](auto v) { return v + static_cast<decltype(v)>(value); }, x);
}
Tensor mul_scalar(const Tensor& x, double value) {
  return map_elements("mul_scalar", [value](auto v) { return v * static_cast<decltype(v)>(value); }, x);
}
Tensor rsub_scalar(const Tensor& x, double value) {
  return map_elements("rsub_scalar", [value](auto v) { return static_cast<decltype(v)>(value) - v; }, x);
}
Tensor rdiv_scalar(const Tensor& x, double value) {
  return map_elements("rdiv_scalar", [value](auto v) { return static_cast<decltype(v)>(value) / v; }, x);
}
Tensor pow_scalar(const Tensor& x, double exponent) {
  return map_elements("pow", [exponent](auto v) { return std::pow(v, static_cast<decltype(v)>(exponent)); }, x);
}
Tensor pow_scalar_backward(const Tensor& grad, const Tensor& x, double exponent) {
  return map_elements("pow_backward", [exponent](auto g, auto v) {
    using T = decltype(v);
    return g * static_cast<T>(exponent) * std::pow(v, static_cast<T>(exponent - 1));
  }, grad, x);
}

// ---- unary -----------------------------------------------------------------------------------------

Tensor neg(const Tensor& x) { return map_elements("neg", [](auto v) { return -v; }, x); }
Tensor exp(const Tensor& x) { return map_elements("exp", [](auto v) { return std::exp(v); }, x); }
Tensor log(const Tensor& x) { return map_elements("log", [](auto v) { return std::log(v); }, x); }
Tensor sqrt(const Tensor& x) { return map_elements("sqrt", [](auto v) { return std::sqrt(v); }, x); }
Tensor tanh(const Tensor& x) { return map_elements("tanh", [](auto v) { return std::tanh(v); }, x); }
Tensor sigmoid(const Tensor& x) {
  return map_elements("sigmoid", [](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); }, x);
}
Tensor relu(const Tensor& x) { return map_elements("relu", [](auto v) { return v > 0 ? v : decltype(v)(0); }, x); }

namespace {
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // √(2/π)
constexpr double kGeluCubic = 0.044715;
}  // namespace

Tensor gelu_tanh(const Tensor& x) {
  return map_elements("gelu_tanh", [](auto v) {
    using T = decltype(v);
    return T(0.5) * v * (T(1) + std::tanh(T(kSqrt2OverPi) * (v + T(kGeluCubic) * v * v * v)));
  }, x);
}
Tensor gelu_erf(const Tensor& x) {
  return map_elements("gelu_erf", [](auto v) {
    using T = decltype(v);
    return T(0.5) * v * (T(1) + std::erf(v * T(std::numbers::sqrt2 / 2)));
  }, x);
}

Tensor exp_backward(const Tensor& grad, const Tensor& y) { return mul(grad, y); }
Tensor log_backward(const Tensor& grad, const Tensor& x) { return div(grad, x); }
Tensor sqrt_backward(const Tensor& grad, const Tensor& y) {
  return map_elements("sqrt_backward", [](auto g, auto r) { return g / (decltype(r)(2) * r); }, grad, y);
}
Tensor tanh_backward(const Tensor& grad, const Tensor& y) {
  return map_elements("tanh_backward", [](auto g, auto t) { return g * (decltype(t)(1) - t * t); }, grad, y);
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y) {
  return map_elements("sigmoid_backward", [](auto g, auto s) { return g * s * (decltype(s)(1) - s); }, grad, y);
}
Tensor relu_backward(const Tensor& grad, const Tensor& x) {
  return map_elements("relu_backward", [](auto g, auto v) { return v > 0 ? g : decltype(g)(0); }, grad, x);
}
// u = √(2/π)(x + c·x³), t = tanh(u):  d/dx [x(1+t)/2] = (1+t)/2 + x(1-t²)/2 · √(2/π)(1 + 3c·x²)
Tensor gelu_tanh_backward(const Tensor& grad, const Tensor& x) {
  return map_elements("gelu_tanh_backward", [](auto g, auto v) {
    using T = decltype(v);
    const T t = std::tanh(T(kSqrt2OverPi) * (v + T(kGeluCubic) * v * v * v));
    const T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * v * v);
    return g * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * du);
  }, grad, x);
}
// d/dx [x·Φ(x)] = Φ(x) + x·φ(x),  φ(x) = exp(-x²/2)/√(2π)
Tensor gelu_erf_backward(const Tensor& grad, const Tensor& x) {
  return map_elements("gelu_erf_backward", [](auto g, auto v) {
    using T = decltype(v);
    const T cdf = T(0.5) * (T(1) + std::erf(v * T(std::numbers::sqrt2 / 2)));
    const T pdf = std::exp(T(-0.5) * v * v) * T(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
    return g * (cdf + v * pdf);
  }, grad, x);
}

}  // namespace agf::ops
