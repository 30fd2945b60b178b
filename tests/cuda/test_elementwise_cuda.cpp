// Pointwise ops on a GPU against the CPU: every binary op with broadcasting, scalar and unary ops and
// every backward, on contiguous, broadcast, transposed and sliced inputs, f64/f32 tight, f16/bf16 to an
// ulp of their own precision; exact arithmetic on integer values; the errors.
#include <catch2/catch.hpp>

#include "ops/elementwise.h"
#include "tests/cuda/op_compare.h"

using namespace agf;
using testing::compare_with_cpu;
using testing::random_f64;
using testing::Tensors;

namespace {

// Layouts for two operands of a binary op: (name, shape of a, shape of b, views on either device).
struct BinaryLayout {
  const char* name;
  Shape a_shape;
  Shape b_shape;
  testing::TensorsFn views;
};

std::vector<BinaryLayout> binary_layouts() {
  return {
      {"same shape, contiguous", {37, 129}, {37, 129}, testing::identity_views},
      {"row broadcast [129]", {37, 129}, {129}, testing::identity_views},
      {"column broadcast [37, 1]", {37, 129}, {37, 1}, testing::identity_views},
      {"both broadcast [2,1,4] with [3,1]", {2, 1, 4}, {3, 1}, testing::identity_views},
      {"rank-0 operand", {5, 7}, {}, testing::identity_views},
      {"transposed a",
       {129, 37},
       {37, 129},
       [](const Tensors& t) {
         return Tensors{t[0].transpose(0, 1), t[1]};
       }},
      {"sliced a and b (step 2)",
       {40, 64},
       {40, 130},
       [](const Tensors& t) {
         return Tensors{t[0].slice(1, 0, 64, 2), t[1].slice(1, 1, 65, 2).slice(0, 0, 40)};
       }},
      {"permuted 3-D a, expanded b",
       {4, 5, 6},
       {6, 1},
       [](const Tensors& t) {
         return Tensors{t[0].permute({2, 0, 1}), t[1].unsqueeze(2).expand({6, 4, 5})};
       }},
      {"large contiguous (grid-stride)", {1 << 20}, {1 << 20}, testing::identity_views},
      {"odd sizes", {1, 31, 33}, {33}, testing::identity_views},
  };
}

// Divisors away from zero: |b| in [0.5, 2).
Tensor away_from_zero(const Shape& shape, uint64_t seed) {
  const Tensor magnitude = random_f64(shape, seed, 0.5, 2.0);
  const Tensor sign = random_f64(shape, seed + 1);
  std::vector<double> values = magnitude.to_double_vector(), signs = sign.to_double_vector();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = signs[i] < 0 ? -values[i] : values[i];
  return Tensor::from_vector(values, shape, DType::f64);
}

}  // namespace

TEST_CASE("GPU binary ops broadcast like the CPU, in every layout and dtype", "[cuda][gpu][elementwise]") {
  AGF_REQUIRE_GPU();
  uint64_t seed = 100;
  for (const BinaryLayout& layout : binary_layouts()) {
    const Tensor a = random_f64(layout.a_shape, seed++, -3, 3);
    const Tensor b = away_from_zero(layout.b_shape, seed++);
    const std::string name = layout.name;
    compare_with_cpu(
        "add, " + name, {a, b}, [](const Tensors& t) { return ops::add(t[0], t[1]); }, layout.views);
    compare_with_cpu(
        "sub, " + name, {a, b}, [](const Tensors& t) { return ops::sub(t[0], t[1]); }, layout.views);
    compare_with_cpu(
        "mul, " + name, {a, b}, [](const Tensors& t) { return ops::mul(t[0], t[1]); }, layout.views);
    compare_with_cpu(
        "div, " + name, {a, b}, [](const Tensors& t) { return ops::div(t[0], t[1]); }, layout.views);
    // The same op with the operands swapped (the broadcast operand first).
    compare_with_cpu(
        "sub swapped, " + name, {a, b}, [](const Tensors& t) { return ops::sub(t[1], t[0]); }, layout.views);
  }
}

TEST_CASE("GPU binary ops on integer values are exact in every dtype", "[cuda][gpu][elementwise]") {
  AGF_REQUIRE_GPU();
  const Tensor a = testing::random_integers({33, 65}, 1, -16, 16), b = testing::random_integers({65}, 2, -16, 16);
  auto exact = [](DType) { return testing::Tolerance{0, 0}; };
  compare_with_cpu(
      "add", {a, b}, [](const Tensors& t) { return ops::add(t[0], t[1]); }, testing::identity_views, exact);
  compare_with_cpu(
      "sub", {a, b}, [](const Tensors& t) { return ops::sub(t[0], t[1]); }, testing::identity_views, exact);
  compare_with_cpu(
      "mul", {a, b}, [](const Tensors& t) { return ops::mul(t[0], t[1]); }, testing::identity_views, exact);
  compare_with_cpu(
      "transposed add", {a, a},
      [](const Tensors& t) { return ops::add(t[0].transpose(0, 1), t[1].transpose(0, 1).contiguous()); },
      testing::identity_views, exact);
}

TEST_CASE("GPU unary and scalar ops match the CPU on contiguous and strided inputs", "[cuda][gpu][elementwise]") {
  AGF_REQUIRE_GPU();
  const Tensor x = random_f64({67, 45}, 7, -4, 4);
  const Tensor positive = random_f64({67, 45}, 8, 0.1, 4);
  const std::vector<std::pair<const char*, testing::TensorsFn>> layouts{
      {"contiguous", testing::identity_views},
      {"transposed", [](const Tensors& t) { return Tensors{t[0].transpose(0, 1)}; }},
      {"sliced", [](const Tensors& t) { return Tensors{t[0].slice(0, 3, 67, 3).slice(1, 1, 44)}; }},
      {"expanded",
       [](const Tensors& t) {
         return Tensors{t[0].slice(0, 0, 1).expand({5, 67, 45}).select(1, 0)};
       }},
  };
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> any_sign{
      {"neg", [](const Tensor& v) { return ops::neg(v); }},
      {"exp", [](const Tensor& v) { return ops::exp(v); }},
      {"tanh", [](const Tensor& v) { return ops::tanh(v); }},
      {"sigmoid", [](const Tensor& v) { return ops::sigmoid(v); }},
      {"relu", [](const Tensor& v) { return ops::relu(v); }},
      {"gelu_tanh", [](const Tensor& v) { return ops::gelu_tanh(v); }},
      {"gelu_erf", [](const Tensor& v) { return ops::gelu_erf(v); }},
      {"add_scalar", [](const Tensor& v) { return ops::add_scalar(v, 2.5); }},
      {"mul_scalar", [](const Tensor& v) { return ops::mul_scalar(v, -0.3); }},
      {"rsub_scalar", [](const Tensor& v) { return ops::rsub_scalar(v, 1.25); }},
  };
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> positive_only{
      {"log", [](const Tensor& v) { return ops::log(v); }},
      {"sqrt", [](const Tensor& v) { return ops::sqrt(v); }},
      {"pow 1.5", [](const Tensor& v) { return ops::pow_scalar(v, 1.5); }},
      {"pow -0.7", [](const Tensor& v) { return ops::pow_scalar(v, -0.7); }},
      {"rdiv_scalar", [](const Tensor& v) { return ops::rdiv_scalar(v, 2.0); }},
  };
  for (const auto& [layout, views] : layouts) {
    for (const auto& [name, op] : any_sign) {
      compare_with_cpu(
          std::string(name) + ", " + layout, {x}, [op = op](const Tensors& t) { return op(t[0]); }, views);
    }
    for (const auto& [name, op] : positive_only) {
      compare_with_cpu(
          std::string(name) + ", " + layout, {positive}, [op = op](const Tensors& t) { return op(t[0]); }, views);
    }
  }
}

TEST_CASE("GPU backward of every pointwise op matches the CPU", "[cuda][gpu][elementwise]") {
  AGF_REQUIRE_GPU();
  const Tensor g = random_f64({2, 3, 40}, 20, -1, 1);
  const Tensor x = random_f64({2, 3, 40}, 21, -3, 3);
  const Tensor positive = random_f64({2, 3, 40}, 22, 0.2, 3);
  const Tensor b = away_from_zero({3, 1}, 23);
  auto unary = [&](const char* name, const Tensor& input, Tensor (*backward)(const Tensor&, const Tensor&)) {
    compare_with_cpu(name, {g, input}, [backward](const Tensors& t) { return backward(t[0], t[1]); });
    // the gradient as a transposed view, the saved tensor broadcast from a row
    compare_with_cpu(std::string(name) + ", strided", {g, input}, [backward](const Tensors& t) {
      return backward(t[0].transpose(0, 2).contiguous().transpose(0, 2), t[1].slice(0, 0, 1).expand({2, 3, 40}));
    });
  };
  unary("exp_backward", x, ops::exp_backward);
  unary("log_backward", positive, ops::log_backward);
  unary("sqrt_backward", positive, ops::sqrt_backward);
  unary("tanh_backward", x, ops::tanh_backward);
  unary("sigmoid_backward", x, ops::sigmoid_backward);
  unary("relu_backward", x, ops::relu_backward);
  unary("gelu_tanh_backward", x, ops::gelu_tanh_backward);
  unary("gelu_erf_backward", x, ops::gelu_erf_backward);
  compare_with_cpu("pow_scalar_backward", {g, positive},
                   [](const Tensors& t) { return ops::pow_scalar_backward(t[0], t[1], 2.7); });

  // Binary backwards reduce to each operand's shape (sum_to on the GPU): a [2,3,40], b [3,1].
  const Shape a_shape{2, 3, 40}, b_shape{3, 1};
  for (int side = 0; side < 2; ++side) {
    const std::string which = side == 0 ? " (grad a)" : " (grad b)";
    auto pick = [side](const std::pair<Tensor, Tensor>& grads) { return side == 0 ? grads.first : grads.second; };
    // Reductions add up to 80 terms in a different order on the GPU: a looser f32/half tolerance.
    auto summed = [](DType dtype) {
      testing::Tolerance t = testing::pointwise_tolerance(dtype);
      return testing::Tolerance{t.rtol * 4, t.atol * 40};
    };
    compare_with_cpu(
        "add_backward" + which, {g}, [&](const Tensors& t) { return pick(ops::add_backward(t[0], a_shape, b_shape)); },
        testing::identity_views, summed);
    compare_with_cpu(
        "sub_backward" + which, {g}, [&](const Tensors& t) { return pick(ops::sub_backward(t[0], a_shape, b_shape)); },
        testing::identity_views, summed);
    compare_with_cpu(
        "mul_backward" + which, {g, x, b}, [&](const Tensors& t) { return pick(ops::mul_backward(t[0], t[1], t[2])); },
        testing::identity_views, summed);
    compare_with_cpu(
        "div_backward" + which, {g, x, b}, [&](const Tensors& t) { return pick(ops::div_backward(t[0], t[1], t[2])); },
        testing::identity_views, summed);
  }
}

TEST_CASE("GPU pointwise ops: empty and rank-0 tensors, and the errors", "[cuda][gpu][elementwise]") {
  AGF_REQUIRE_GPU();
  const Device gpu = Device::cuda();
  const Tensor empty = Tensor::zeros({0, 3}, DType::f32, gpu);
  CHECK(ops::add(empty, Tensor::ones({3}, DType::f32, gpu)).shape() == Shape{0, 3});
  CHECK(ops::exp(empty).shape() == Shape{0, 3});
  const Tensor scalar = Tensor::full({}, 2.0, DType::f32, gpu);
  CHECK(ops::mul(scalar, scalar).to(Device::cpu()).item() == 4.0);

  const Tensor a = Tensor::zeros({2, 3, 4}, DType::f32, gpu);
  CHECK_THROWS_WITH(ops::add(a, Tensor::zeros({2, 4}, DType::f32, gpu)),
                    Catch::Contains("add: shapes [2, 3, 4] and [2, 4] cannot be broadcast together"));
  CHECK_THROWS_WITH(ops::mul(a, Tensor::zeros({2, 3, 4}, DType::f64, gpu)), Catch::Contains("dtype mismatch"));
  CHECK_THROWS_WITH(ops::exp(Tensor::zeros({2}, DType::i64, gpu)), Catch::Contains("exp") && Catch::Contains("i64"));
  CHECK_THROWS_WITH(ops::add(a, Tensor::zeros({2, 3, 4})), Catch::Contains("different devices"));
}
