// The gradient checks of every differentiable op in autograd/functions.h, by name, for `agf gradcheck` and
// the tests; op_checks() adds them to the registry (autograd/builtin_op_checks.h). Each case draws f64
// inputs from a fixed seed; several use broadcasting or non-contiguous (transposed, sliced) inputs so that
// the strided paths are proven too.
#include <cmath>

#include "autograd/builtin_op_checks.h"
#include "autograd/functions.h"
#include "core/random.h"

namespace agf {

namespace {

using Inputs = std::vector<Variable>;

// A fresh f64 tensor of `shape` with values uniform in [low, high), from a seed of its own.
Tensor random_input(const Shape& shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Generator generator(seed);
  return uniform(shape, generator, low, high, DType::f64);
}

// Values in ±[0.1, 1): away from 0, for ops with a kink or pole there (relu, div).
Tensor away_from_zero(const Shape& shape, uint64_t seed) {
  Tensor t = random_input(shape, seed, 0.1, 1.0);
  Tensor signs = random_input(shape, seed + 99);
  double* values = t.data<double>();
  const double* s = signs.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) values[i] = s[i] < 0 ? -values[i] : values[i];
  return t;
}

// A check of f on the given inputs (a lambda producing them, so every run starts fresh).
OpCheck check(std::string name, std::string description, CheckedFunction f,
              std::function<std::vector<Tensor>()> make_inputs, GradcheckOptions options = {}) {
  return OpCheck{std::move(name), std::move(description),
                 [f, make_inputs, options]() { return gradcheck(f, make_inputs(), options); }};
}

}  // namespace

void add_function_op_checks(std::vector<OpCheck>& checks) {
  // clang-format off
  // ---- arithmetic ----
  checks.push_back(check("add", "a + b, same shapes", [](const Inputs& x) { return x[0] + x[1]; },
                         [] { return std::vector{random_input({3, 4}, 1), random_input({3, 4}, 2)}; }));
  checks.push_back(check(
      "add_broadcast", "a[2,3,4] + b[3,1]: gradient of b summed over broadcast axes",
      [](const Inputs& x) { return x[0] + x[1]; }, [] { return std::vector{random_input({2, 3, 4}, 3), random_input({3, 1}, 4)}; }));
  checks.push_back(check("sub_broadcast", "a[4] - b[2,4]", [](const Inputs& x) { return x[0] - x[1]; },
                         [] { return std::vector{random_input({4}, 5), random_input({2, 4}, 6)}; }));
  checks.push_back(check("mul_broadcast", "a[2,1,4] * b[3,1]", [](const Inputs& x) { return x[0] * x[1]; },
                         [] { return std::vector{random_input({2, 1, 4}, 7), random_input({3, 1}, 8)}; }));
  checks.push_back(check(
      "mul_transposed", "aᵀ * b with a a transposed view", [](const Inputs& x) { return x[0] * x[1]; },
      [] { return std::vector{random_input({4, 3}, 9).transpose(0, 1), random_input({3, 4}, 10)}; }));
  checks.push_back(check("div_broadcast", "a[3,4] / b[4]", [](const Inputs& x) { return x[0] / x[1]; },
                         [] { return std::vector{random_input({3, 4}, 11), away_from_zero({4}, 12)}; }));
  checks.push_back(check("add_scalar", "x + 2.5", [](const Inputs& x) { return x[0] + 2.5; },
                         [] { return std::vector{random_input({5}, 13)}; }));
  checks.push_back(check("mul_scalar", "-3 · x", [](const Inputs& x) { return -3.0 * x[0]; },
                         [] { return std::vector{random_input({5}, 14)}; }));
  checks.push_back(check("pow", "x^2.7 for x > 0", [](const Inputs& x) { return pow(x[0], 2.7); },
                         [] { return std::vector{random_input({2, 3}, 15, 0.2, 2.0)}; }));
  checks.push_back(check("neg", "-x", [](const Inputs& x) { return -x[0]; }, [] { return std::vector{random_input({4}, 16)}; }));

  // ---- pointwise ----
  checks.push_back(check("exp", "exp(x) on a sliced view", [](const Inputs& x) { return exp(x[0]); },
                         [] { return std::vector{random_input({4, 6}, 17).slice(1, 1, 6, 2)}; }));
  checks.push_back(check("log", "log(x), x > 0", [](const Inputs& x) { return log(x[0]); },
                         [] { return std::vector{random_input({3, 3}, 18, 0.2, 3.0)}; }));
  checks.push_back(check("sqrt", "sqrt(x), x > 0", [](const Inputs& x) { return sqrt(x[0]); },
                         [] { return std::vector{random_input({3, 3}, 19, 0.2, 3.0)}; }));
  checks.push_back(check("tanh", "tanh(x)", [](const Inputs& x) { return tanh(x[0]); },
                         [] { return std::vector{random_input({3, 4}, 20, -2, 2)}; }));
  checks.push_back(check("sigmoid", "σ(x)", [](const Inputs& x) { return sigmoid(x[0]); },
                         [] { return std::vector{random_input({3, 4}, 21, -3, 3)}; }));
  checks.push_back(check("relu", "max(x, 0), x away from 0", [](const Inputs& x) { return relu(x[0]); },
                         [] { return std::vector{away_from_zero({3, 4}, 22)}; }));
  checks.push_back(check("gelu_tanh", "GELU, tanh form", [](const Inputs& x) { return gelu_tanh(x[0]); },
                         [] { return std::vector{random_input({3, 4}, 23, -3, 3)}; }));
  checks.push_back(check("gelu_erf", "GELU, erf form", [](const Inputs& x) { return gelu_erf(x[0]); },
                         [] { return std::vector{random_input({3, 4}, 24, -3, 3)}; }));

  // ---- matmul ----
  checks.push_back(check("matmul", "[3,4] @ [4,5]", [](const Inputs& x) { return matmul(x[0], x[1]); },
                         [] { return std::vector{random_input({3, 4}, 25), random_input({4, 5}, 26)}; }));
  checks.push_back(check(
      "matmul_transposed", "Aᵀ @ Bᵀ, both transposed views (no copies)",
      [](const Inputs& x) { return matmul(x[0], x[1]); },
      [] { return std::vector{random_input({4, 3}, 27).transpose(0, 1), random_input({5, 4}, 28).transpose(0, 1)}; }));
  checks.push_back(check(
      "matmul_batched", "[2,3,4,5] @ [3,5,2]: batch axes broadcast",
      [](const Inputs& x) { return matmul(x[0], x[1]); },
      [] { return std::vector{random_input({2, 3, 4, 5}, 29), random_input({3, 5, 2}, 30)}; }));
  checks.push_back(check("matmul_vector", "[4] @ [2,4,3] (vector promoted to a matrix)",
                         [](const Inputs& x) { return matmul(x[0], x[1]); },
                         [] { return std::vector{random_input({4}, 31), random_input({2, 4, 3}, 32)}; }));

  // ---- reductions ----
  checks.push_back(check("sum", "sum over axes {0, 2}", [](const Inputs& x) { return sum(x[0], {0, 2}); },
                         [] { return std::vector{random_input({2, 3, 4}, 33)}; }));
  checks.push_back(check("sum_all", "sum of every element", [](const Inputs& x) { return sum(x[0]); },
                         [] { return std::vector{random_input({3, 4}, 34).transpose(0, 1)}; }));
  checks.push_back(check("mean", "mean over axis -1, keepdim", [](const Inputs& x) { return mean(x[0], {-1}, true); },
                         [] { return std::vector{random_input({2, 3, 4}, 35)}; }));
  checks.push_back(check("max", "max over axis 1", [](const Inputs& x) { return max(x[0], {1}); },
                         [] { return std::vector{random_input({3, 5}, 36)}; }));

  // ---- normalization, probabilities, losses ----
  checks.push_back(check("softmax", "softmax over the last axis of a transposed view",
                         [](const Inputs& x) { return softmax(x[0]); },
                         [] { return std::vector{random_input({5, 3}, 37, -2, 2).transpose(0, 1)}; }));
  checks.push_back(check("log_softmax", "log-softmax over the last axis",
                         [](const Inputs& x) { return log_softmax(x[0]); },
                         [] { return std::vector{random_input({2, 3, 5}, 38, -2, 2)}; }));
  checks.push_back(check(
      "layer_norm", "LayerNorm over 6 features with weight and bias",
      [](const Inputs& x) { return layer_norm(x[0], x[1], x[2], 1e-5); },
      [] { return std::vector{random_input({2, 3, 6}, 39, -2, 2), random_input({6}, 40, 0.5, 1.5), random_input({6}, 41)}; }));
  checks.push_back(check(
      "cross_entropy", "label-smoothed (0.1) cross-entropy with an ignored row",
      [](const Inputs& x) {
        const Tensor targets = Tensor::from_vector(std::vector<int64_t>{2, 0, -100, 4}, {4}).to(x[0].data().device());
        return cross_entropy(x[0], targets, {.label_smoothing = 0.1, .ignore_index = -100});
      },
      [] { return std::vector{random_input({4, 5}, 42, -2, 2)}; }));

  // ---- lookup and regularization ----
  checks.push_back(check("embedding", "rows of a [6,3] table, ids repeated",
                         [](const Inputs& x) {
                           const Tensor ids = Tensor::from_vector(std::vector<int64_t>{1, 4, 1, 0, 5, 1}, {2, 3})
                                                  .to(x[0].data().device());
                           return embedding(x[0], ids);
                         },
                         [] { return std::vector{random_input({6, 3}, 43)}; }));
  checks.push_back(check("dropout", "p = 0.3, mask regenerated from (seed, offset) in backward",
                         [](const Inputs& x) { return dropout(x[0], 0.3, 77, 5); },
                         [] { return std::vector{random_input({4, 8}, 44)}; }));

  // ---- shape ----
  checks.push_back(check("concat", "concat along axis 1 of [2,2], [2,3] and a sliced [2,1]",
                         [](const Inputs& x) { return concat({x[0], x[1], x[2]}, 1); },
                         [] {
                           return std::vector{random_input({2, 2}, 45), random_input({2, 3}, 46),
                                              random_input({2, 3}, 47).slice(1, 1, 2)};
                         }));
  checks.push_back(check(
      "views", "reshape ∘ permute ∘ slice ∘ expand, weighted so each view's backward matters",
      [](const Inputs& x) {
        const Variable r = reshape(x[0], {3, 2, 4});
        const Variable p = permute(r, {2, 0, 1});
        const Variable s = slice(p, 0, 1, 4, 2);
        const Variable e = expand(x[1], {2, 3, 2});
        return contiguous(transpose(s * e, 1, 2));
      },
      [] { return std::vector{random_input({6, 4}, 48), random_input({3, 1}, 49)}; }));

  // ---- dtype ----
  // The square is computed in f32 between two casts. Inputs on a grid of 2^-10 and a step of 2^-6 keep
  // x ± h and (x ± h)² exact in f32 (at most 22 significant bits), and the central difference of a
  // quadratic is exact: what remains is the f32 rounding of the backward (relative 6e-8).
  checks.push_back(check(
      "cast", "f64 → f32 → square in f32 → f64: both casts' backward convert the gradient back",
      [](const Inputs& x) {
        const Variable narrow = cast(x[0], DType::f32);
        return cast(narrow * narrow, DType::f64);
      },
      [] {
        Tensor x = random_input({3, 4}, 50);
        double* values = x.data<double>();
        for (int64_t i = 0; i < x.numel(); ++i) values[i] = std::ldexp(std::round(std::ldexp(values[i], 10)), -10);
        return std::vector{x};
      },
      GradcheckOptions{.step = 0.015625, .tolerance = 1e-6, .seed = 1234, .check = {}}));
  // clang-format on
}

}  // namespace agf
