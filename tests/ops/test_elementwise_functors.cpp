// The shared formulas of ops/elementwise_functors.h: each op on the CPU equals its functor applied to
// every element (bit for bit, f32 and f64), and each backward functor is the derivative of its forward
// functor (central differences in double). The CUDA kernels call the same functors (tests/cuda/).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "core/random.h"
#include "ops/elementwise.h"
#include "ops/elementwise_functors.h"
#include "ops/reduce.h"

using namespace agf;
namespace fn = agf::ops::functors;

namespace {

// Every element of `out` equals f applied to the same elements of `inputs` (all of out's shape), exactly.
template <class T, class F, class... Inputs>
void require_elementwise(const Tensor& out, F f, const Inputs&... inputs) {
  const Tensor result = out.contiguous();
  const std::array<Tensor, sizeof...(Inputs)> in{inputs.expand(out.shape()).contiguous()...};
  const T* r = result.data<T>();
  int64_t mismatches = 0;
  for (int64_t i = 0; i < result.numel(); ++i) {
    const T expected = [&]<std::size_t... K>(std::index_sequence<K...>) { return f(in[K].template data<T>()[i]...); }
    (std::make_index_sequence<sizeof...(Inputs)>{});
    // Equal bits, or both NaN.
    if (!(r[i] == expected || (std::isnan(r[i]) && std::isnan(expected)))) ++mismatches;
  }
  CHECK(mismatches == 0);
}

// d/dx f(x) by central differences, in double.
double derivative(const std::function<double(double)>& f, double x) {
  const double h = 1e-6;
  return (f(x + h) - f(x - h)) / (2 * h);
}

}  // namespace

TEMPLATE_TEST_CASE("every pointwise CPU op is its functor, element by element", "[ops][elementwise]", double, float) {
  using T = TestType;
  const DType dtype = dtype_v<T>;
  Generator generator(31);
  const Tensor x = uniform({23, 17}, generator, -4, 4, dtype);
  const Tensor xt = uniform({17, 23}, generator, -4, 4, dtype).transpose(0, 1);  // strided path
  const Tensor row = uniform({17}, generator, -2, 2, dtype);                     // broadcast
  const Tensor g = uniform({23, 17}, generator, -1, 1, dtype);
  const Tensor positive = uniform({23, 17}, generator, 0.1, 3, dtype);
  for (const Tensor& v : {x, xt}) {
    require_elementwise<T>(ops::add(v, row), fn::Add{}, v, row);
    require_elementwise<T>(ops::sub(v, row), fn::Sub{}, v, row);
    require_elementwise<T>(ops::mul(v, row), fn::Mul{}, v, row);
    require_elementwise<T>(ops::div(v, row), fn::Div{}, v, row);
    require_elementwise<T>(ops::add_scalar(v, 0.3), fn::AddScalar{0.3}, v);
    require_elementwise<T>(ops::mul_scalar(v, -1.7), fn::MulScalar{-1.7}, v);
    require_elementwise<T>(ops::rsub_scalar(v, 0.9), fn::RsubScalar{0.9}, v);
    require_elementwise<T>(ops::rdiv_scalar(v, 1.1), fn::RdivScalar{1.1}, v);
    require_elementwise<T>(ops::neg(v), fn::Neg{}, v);
    require_elementwise<T>(ops::exp(v), fn::Exp{}, v);
    require_elementwise<T>(ops::tanh(v), fn::Tanh{}, v);
    require_elementwise<T>(ops::sigmoid(v), fn::Sigmoid{}, v);
    require_elementwise<T>(ops::relu(v), fn::Relu{}, v);
    require_elementwise<T>(ops::gelu_tanh(v), fn::GeluTanh{}, v);
    require_elementwise<T>(ops::gelu_erf(v), fn::GeluErf{}, v);
    require_elementwise<T>(ops::tanh_backward(g, v), fn::TanhBackward{}, g, v);
    require_elementwise<T>(ops::sigmoid_backward(g, v), fn::SigmoidBackward{}, g, v);
    require_elementwise<T>(ops::relu_backward(g, v), fn::ReluBackward{}, g, v);
    require_elementwise<T>(ops::gelu_tanh_backward(g, v), fn::GeluTanhBackward{}, g, v);
    require_elementwise<T>(ops::gelu_erf_backward(g, v), fn::GeluErfBackward{}, g, v);
  }
  require_elementwise<T>(ops::log(positive), fn::Log{}, positive);
  require_elementwise<T>(ops::sqrt(positive), fn::Sqrt{}, positive);
  require_elementwise<T>(ops::pow_scalar(positive, 1.3), fn::PowScalar{1.3}, positive);
  require_elementwise<T>(ops::pow_scalar_backward(g, positive, 1.3), fn::PowScalarBackward{1.3}, g, positive);
  require_elementwise<T>(ops::sqrt_backward(g, positive), fn::SqrtBackward{}, g, positive);
  // div_backward's second gradient (no reduction when the shapes agree).
  require_elementwise<T>(ops::div_backward(g, x, positive).second, fn::DivBackwardDivisor{}, g, x, positive);
}

TEST_CASE("each backward functor is the derivative of its forward functor", "[ops][elementwise]") {
  const double g = 0.7;
  for (double x : {-3.1, -1.2, -0.4, 0.3, 0.9, 2.6}) {
    INFO("x = " << x);
    auto check = [&](auto forward, auto backward) {
      CHECK(backward(g, x) == Approx(g * derivative([&](double v) { return forward(v); }, x)).epsilon(1e-7));
    };
    check(fn::Tanh{}, [](double gv, double v) { return fn::TanhBackward{}(gv, std::tanh(v)); });
    check(fn::Sigmoid{}, [](double gv, double v) { return fn::SigmoidBackward{}(gv, fn::Sigmoid{}(v)); });
    check(fn::GeluTanh{}, fn::GeluTanhBackward{});
    check(fn::GeluErf{}, fn::GeluErfBackward{});
    check(fn::Relu{}, fn::ReluBackward{});
    check(fn::Exp{}, [](double gv, double v) { return fn::Mul{}(gv, std::exp(v)); });
    const double positive = std::abs(x);
    CHECK(fn::PowScalarBackward{2.7}(g, positive) ==
          Approx(g * derivative(fn::PowScalar{2.7}, positive)).epsilon(1e-7));
    CHECK(fn::SqrtBackward{}(g, std::sqrt(positive)) == Approx(g * derivative(fn::Sqrt{}, positive)).epsilon(1e-7));
    CHECK(fn::Div{}(g, positive) == Approx(g * derivative(fn::Log{}, positive)).epsilon(1e-7));
    // d(a/b)/db at a = x, b = 1.3
    CHECK(fn::DivBackwardDivisor{}(g, x, 1.3) ==
          Approx(g * derivative([&](double b) { return x / b; }, 1.3)).epsilon(1e-7));
  }
}

TEST_CASE("max_backward shares the gradient equally among tied maxima", "[ops][reduce]") {
  const Tensor x = Tensor::from_vector(std::vector<double>{1, 3, 3, 2, 5, 0, 5, 5}, {2, 4}, DType::f64);
  const Tensor y = ops::max(x, {1});
  const Tensor grad = Tensor::from_vector(std::vector<double>{6, 9}, {2}, DType::f64);
  CHECK(ops::max_backward(grad, x, y, {1}, false).to_double_vector() == std::vector<double>{0, 3, 3, 0, 3, 0, 3, 3});
  CHECK(fn::IsMax{}(2.0, 2.0) == 1.0);
  CHECK(fn::IsMax{}(1.0, 2.0) == 0.0);
  CHECK(fn::ShareAmongTies{}(1.0, 6.0, 3.0) == 2.0);
}
