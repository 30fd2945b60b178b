#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/functions.h"

using agf::DType;
using agf::Tensor;
using agf::Variable;

namespace {
Variable leaf(std::vector<double> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Variable(Tensor::from_vector(values, {n}, DType::f64), true);
}
}  // namespace

TEST_CASE("a diamond graph sums the gradients of both paths", "[autograd]") {
  // y = a·b + a·c with b = 2x, c = x²  =>  dy/dx = 2a + 2ax,  dy/da = b + c
  const Variable x = leaf({3.0});
  const Variable a = leaf({5.0});
  const Variable b = x * 2.0;
  const Variable c = agf::pow(x, 2.0);
  const Variable y = agf::sum(a * b + a * c);
  y.backward();
  CHECK(x.grad().item() == Approx(2 * 5 + 2 * 5 * 3));
  CHECK(a.grad().item() == Approx(6 + 9));
}

TEST_CASE("a variable used twice in one op gets both contributions", "[autograd]") {
  const Variable x = leaf({1.5, -2.0});
  agf::sum(x * x).backward();  // d/dx Σx² = 2x
  CHECK(x.grad().to_double_vector() == std::vector<double>{3.0, -4.0});
}

TEST_CASE("gradients accumulate across two backward calls until zeroed", "[autograd]") {
  const Variable x = leaf({1.0, 2.0});
  agf::sum(x * 3.0).backward();
  agf::sum(x * 3.0).backward();
  CHECK(x.grad().to_double_vector() == std::vector<double>{6.0, 6.0});
  x.zero_grad();
  agf::sum(x).backward();
  CHECK(x.grad().to_double_vector() == std::vector<double>{1.0, 1.0});
}

TEST_CASE("a leaf set to accumulate in a wider dtype sums its contributions there", "[autograd]") {
  // x is f32 and used three times: its contributions are 1, 2^-25 and 2^-25 (the tied embedding's three
  // uses, in miniature). Summed in f32 (24 significant bits) the small ones vanish: 1 + 2^-25 rounds to 1.
  // Summed in f64 they give 1 + 2^-24. Mixed precision does the same with bf16 contributions and f32 sums.
  const double tiny = std::ldexp(1.0, -25);
  auto three_uses = [&](const Variable& x) { return agf::sum(x * 1.0) + agf::sum(x * tiny) + agf::sum(x * tiny); };
  const Variable plain(Tensor::from_vector(std::vector<double>{2.0}, {1}, DType::f32), true);
  three_uses(plain).backward();
  CHECK(plain.grad().dtype() == DType::f32);
  CHECK(plain.grad().item() == 1.0);

  const Variable wide(Tensor::from_vector(std::vector<double>{2.0}, {1}, DType::f32), true);
  wide.accumulate_grad_in(DType::f64);
  three_uses(wide).backward();
  CHECK(wide.grad().dtype() == DType::f64);
  CHECK(wide.grad().item() == 1.0 + 2 * tiny);
  // Across backward calls (gradient accumulation over batches) too, and straight into the leaf.
  three_uses(wide).backward();
  wide.backward(Tensor::from_vector(std::vector<double>{tiny}, {1}, DType::f32));
  CHECK(wide.grad().item() == 2.0 + 5 * tiny);
  CHECK(wide.dtype() == DType::f32);  // the data keeps its dtype
}

TEST_CASE("no-grad mode records nothing, detach cuts the graph", "[autograd]") {
  const Variable x = leaf({1.0});
  {
    agf::NoGradGuard no_grad;
    const Variable y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.is_leaf());
    { agf::NoGradGuard nested; }
    CHECK_FALSE(agf::grad_enabled());
  }
  CHECK(agf::grad_enabled());
  const Variable y = x * 2.0;
  CHECK(y.requires_grad());
  const Variable z = y.detach() * x;  // only the second factor carries a gradient
  agf::sum(z).backward();
  CHECK(x.grad().item() == Approx(2.0));
  const Variable constant(Tensor::ones({2}, DType::f64));
  CHECK_FALSE((constant * 2.0).requires_grad());
}

TEST_CASE("backward with an explicit output gradient, and its errors", "[autograd]") {
  const Variable x = leaf({1.0, 2.0, 3.0});
  const Variable y = x * x;
  CHECK_THROWS_WITH(y.backward(), Catch::Contains("one-element output"));
  y.backward(Tensor::from_vector(std::vector<double>{1, 0, -1}, {3}, DType::f64));
  CHECK(x.grad().to_double_vector() == std::vector<double>{2.0, 0.0, -6.0});
  CHECK_THROWS_WITH(y.backward(Tensor::ones({2}, DType::f64)), Catch::Contains("does not match the output"));
}

TEST_CASE("a second backward through a freed graph is an error, not a double count", "[autograd]") {
  const Variable x = leaf({2.0});
  const Variable h = agf::exp(x);
  const Variable y = agf::sum(h * 3.0);
  y.backward();
  const double first = x.grad().item();
  CHECK_THROWS_WITH(y.backward(), Catch::Contains("second time"));
  // A new graph that reuses an intermediate of the freed one is refused too.
  const Variable z = agf::sum(h * 2.0);
  CHECK_THROWS_WITH(z.backward(), Catch::Contains("second time"));
  CHECK(x.grad().item() == first);
}

TEST_CASE("backward on a variable without a gradient, and integer leaves, are refused", "[autograd]") {
  const Variable constant(Tensor::ones({1}, DType::f64));
  CHECK_THROWS_WITH(constant.backward(), Catch::Contains("does not require a gradient"));
  CHECK_THROWS_WITH(Variable(Tensor::zeros({2}, DType::i64), true), Catch::Contains("floating-point"));
}

TEST_CASE("a leaf's gradient is a fresh tensor, not an alias of the output gradient", "[autograd]") {
  const Variable x = leaf({1.0, 1.0});
  const Tensor seed = Tensor::ones({2}, DType::f64);
  (x + 0.0).backward(seed);
  CHECK(x.grad().storage() != seed.storage());
}

TEST_CASE("shape mismatches inside a graph name the op and both shapes", "[autograd][errors]") {
  const Variable a(Tensor::zeros({2, 3}, DType::f64), true);
  const Variable b(Tensor::zeros({4, 5}, DType::f64), true);
  CHECK_THROWS_WITH(agf::matmul(a, b),
                    Catch::Contains("matmul: inner dimensions differ: f64[2, 3] on cpu @ f64[4, 5] on cpu (3 vs 4)"));
  CHECK_THROWS_WITH(a * b, Catch::Contains("mul: shapes [2, 3] and [4, 5] cannot be broadcast"));
  const Variable c(Tensor::zeros({2, 3}, DType::f32), true);
  CHECK_THROWS_WITH(a + c, Catch::Contains("add: dtype mismatch (f64[2, 3] on cpu and f32[2, 3] on cpu)"));
}
