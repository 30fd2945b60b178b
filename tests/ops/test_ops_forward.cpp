// Each op's forward against a naive reference loop written out here, in f64.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "core/philox.h"
#include "core/random.h"
#include "core/storage.h"
#include "ops/concat.h"
#include "ops/cross_entropy.h"
#include "ops/dropout.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/layer_norm.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/softmax.h"

using agf::DType;
using agf::Shape;
using agf::Tensor;

namespace {
Tensor random_tensor(const Shape& shape, uint64_t seed, DType dtype = DType::f64) {
  agf::Generator generator(seed);
  return agf::uniform(shape, generator, -1.0, 1.0, dtype);
}

void check_close(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance = 1e-12) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == Approx(expected[i]).margin(tolerance).epsilon(tolerance));
  }
}

// out[i, j] = Σ_k a[i, k] b[k, j] on row-major vectors
std::vector<double> naive_matmul(const std::vector<double>& a, const std::vector<double>& b, int m, int k, int n) {
  std::vector<double> out(m * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) out[i * n + j] += a[i * k + p] * b[p * n + j];
  return out;
}
}  // namespace

TEST_CASE("matmul equals the triple loop, for every operand layout and batch broadcasting", "[ops][matmul]") {
  const Tensor a = random_tensor({5, 7}, 1), b = random_tensor({7, 3}, 2);
  const std::vector<double> expected = naive_matmul(a.to_double_vector(), b.to_double_vector(), 5, 7, 3);
  check_close(agf::ops::matmul(a, b).to_double_vector(), expected);
  // The same product from transposed views of transposed copies: no data layout should matter.
  const Tensor a_t = a.transpose(0, 1).contiguous().transpose(0, 1);
  const Tensor b_t = b.transpose(0, 1).contiguous().transpose(0, 1);
  CHECK_FALSE(a_t.is_contiguous());
  check_close(agf::ops::matmul(a_t, b).to_double_vector(), expected);
  check_close(agf::ops::matmul(a, b_t).to_double_vector(), expected);
  check_close(agf::ops::matmul(a_t, b_t).to_double_vector(), expected);
  // A sliced operand (non-unit stride on both axes) is copied first, still right.
  const Tensor wide = random_tensor({5, 14}, 3);
  const Tensor strided = wide.slice(1, 0, 14, 2);
  check_close(agf::ops::matmul(strided, b).to_double_vector(),
              naive_matmul(strided.contiguous().to_double_vector(), b.to_double_vector(), 5, 7, 3));
  // Batched with broadcasting: [2, 1, 4, 3] @ [3, 3, 2] -> [2, 3, 4, 2]
  const Tensor x = random_tensor({2, 1, 4, 3}, 4), y = random_tensor({3, 3, 2}, 5);
  const Tensor out = agf::ops::matmul(x, y);
  REQUIRE(out.shape() == Shape{2, 3, 4, 2});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      check_close(out.select(0, i).select(0, j).to_double_vector(),
                  naive_matmul(x.select(0, i).select(0, 0).to_double_vector(), y.select(0, j).to_double_vector(), 4, 3,
                               2));
    }
  }
  CHECK_THROWS_WITH(agf::ops::matmul(a, a),
                    Catch::Contains("inner dimensions differ: f64[5, 7] on cpu @ f64[5, 7] on cpu (7 vs 5)"));
  CHECK_THROWS_WITH(agf::ops::matmul(a, b.to(DType::f32)), Catch::Contains("dtype mismatch"));
  CHECK(agf::ops::matmul(random_tensor({4}, 6), random_tensor({4}, 7)).dim() == 0);
}

TEST_CASE("matmul in f32 agrees with f64", "[ops][matmul]") {
  const Tensor a = random_tensor({64, 80}, 8), b = random_tensor({80, 48}, 9);
  check_close(agf::ops::matmul(a.to(DType::f32), b.to(DType::f32)).to_double_vector(),
              agf::ops::matmul(a, b).to_double_vector(), 1e-5);
}

TEST_CASE("binary ops broadcast like NumPy", "[ops][elementwise]") {
  const Tensor a = random_tensor({2, 3, 4}, 10), b = random_tensor({3, 1}, 11);
  const auto av = a.to_double_vector(), bv = b.to_double_vector();
  std::vector<double> sum(24), product(24), difference(24), quotient(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const int at = (i * 3 + j) * 4 + k;
        sum[at] = av[at] + bv[j];
        difference[at] = av[at] - bv[j];
        product[at] = av[at] * bv[j];
        quotient[at] = av[at] / bv[j];
      }
  check_close(agf::ops::add(a, b).to_double_vector(), sum);
  check_close(agf::ops::sub(a, b).to_double_vector(), difference);
  check_close(agf::ops::mul(a, b).to_double_vector(), product);
  check_close(agf::ops::div(a, b).to_double_vector(), quotient);
  CHECK_THROWS_WITH(agf::ops::add(a, random_tensor({2, 4}, 12)),
                    Catch::Contains("add: shapes [2, 3, 4] and [2, 4] cannot be broadcast together"));
}

TEST_CASE("unary and scalar ops match their formulas", "[ops][elementwise]") {
  const Tensor x = random_tensor({3, 5}, 13).transpose(0, 1);  // non-contiguous input
  const auto v = x.to_double_vector();
  auto expect = [&](const Tensor& out, auto formula) {
    std::vector<double> expected(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) expected[i] = formula(v[i]);
    check_close(out.to_double_vector(), expected);
  };
  expect(agf::ops::neg(x), [](double t) { return -t; });
  expect(agf::ops::exp(x), [](double t) { return std::exp(t); });
  expect(agf::ops::tanh(x), [](double t) { return std::tanh(t); });
  expect(agf::ops::sigmoid(x), [](double t) { return 1 / (1 + std::exp(-t)); });
  expect(agf::ops::relu(x), [](double t) { return t > 0 ? t : 0; });
  expect(agf::ops::gelu_erf(x), [](double t) { return 0.5 * t * (1 + std::erf(t / std::sqrt(2.0))); });
  expect(agf::ops::gelu_tanh(x),
         [](double t) { return 0.5 * t * (1 + std::tanh(std::sqrt(2 / M_PI) * (t + 0.044715 * t * t * t))); });
  expect(agf::ops::add_scalar(x, 2), [](double t) { return t + 2; });
  expect(agf::ops::mul_scalar(x, -3), [](double t) { return -3 * t; });
  expect(agf::ops::rsub_scalar(x, 1), [](double t) { return 1 - t; });
  const Tensor positive = agf::ops::add_scalar(x, 2);
  const auto p = positive.to_double_vector();
  std::vector<double> logs(p.size()), roots(p.size()), powers(p.size()), inverses(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    logs[i] = std::log(p[i]);
    roots[i] = std::sqrt(p[i]);
    powers[i] = std::pow(p[i], 1.5);
    inverses[i] = 2 / p[i];
  }
  check_close(agf::ops::log(positive).to_double_vector(), logs);
  check_close(agf::ops::sqrt(positive).to_double_vector(), roots);
  check_close(agf::ops::pow_scalar(positive, 1.5).to_double_vector(), powers);
  check_close(agf::ops::rdiv_scalar(positive, 2).to_double_vector(), inverses);
  CHECK_THROWS_WITH(agf::ops::exp(Tensor::zeros({2}, DType::i64)), Catch::Contains("exp: dtype i64 is not supported"));
}

TEST_CASE("sum, mean, max over axes, and sum_to", "[ops][reduce]") {
  const Tensor x = random_tensor({2, 3, 4}, 14);
  const auto v = x.to_double_vector();
  std::vector<double> sum_02(3, 0), max_1(8, -1e9);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        sum_02[j] += v[(i * 3 + j) * 4 + k];
        max_1[i * 4 + k] = std::max(max_1[i * 4 + k], v[(i * 3 + j) * 4 + k]);
      }
  check_close(agf::ops::sum(x, {0, 2}).to_double_vector(), sum_02);
  CHECK(agf::ops::sum(x, {0, 2}, true).shape() == Shape{1, 3, 1});
  std::vector<double> mean_02 = sum_02;
  for (double& m : mean_02) m /= 8;
  check_close(agf::ops::mean(x, {-1, 0}).to_double_vector(), mean_02);
  check_close(agf::ops::max(x, {1}).to_double_vector(), max_1);
  CHECK(agf::ops::sum(x).item() == Approx(std::accumulate(v.begin(), v.end(), 0.0)));
  CHECK(agf::ops::sum_to(x, {3, 1}).shape() == Shape{3, 1});
  check_close(agf::ops::sum_to(x, {3, 1}).to_double_vector(), agf::ops::sum(x, {0, 2}).to_double_vector());
  CHECK_THROWS_WITH(agf::ops::sum(x, {3}), Catch::Contains("axis 3 is out of range"));
  CHECK_THROWS_WITH(agf::ops::sum(x, {1, -2}), Catch::Contains("listed twice"));
}

TEST_CASE("softmax and log_softmax over the last axis", "[ops][softmax]") {
  const Tensor x = agf::ops::mul_scalar(random_tensor({3, 6}, 15), 20);  // large logits: stability matters
  const auto v = x.to_double_vector();
  std::vector<double> probabilities(18), log_probabilities(18);
  for (int r = 0; r < 3; ++r) {
    double top = -1e300, total = 0;
    for (int c = 0; c < 6; ++c) top = std::max(top, v[r * 6 + c]);
    for (int c = 0; c < 6; ++c) total += std::exp(v[r * 6 + c] - top);
    for (int c = 0; c < 6; ++c) {
      probabilities[r * 6 + c] = std::exp(v[r * 6 + c] - top) / total;
      log_probabilities[r * 6 + c] = v[r * 6 + c] - top - std::log(total);
    }
  }
  check_close(agf::ops::softmax_forward(x).to_double_vector(), probabilities);
  check_close(agf::ops::log_softmax_forward(x).to_double_vector(), log_probabilities);
}

TEST_CASE("layer_norm normalizes each row then applies weight and bias", "[ops][layer_norm]") {
  const Tensor x = random_tensor({4, 5}, 16), w = random_tensor({5}, 17), b = random_tensor({5}, 18);
  const auto xv = x.to_double_vector(), wv = w.to_double_vector(), bv = b.to_double_vector();
  std::vector<double> expected(20);
  for (int r = 0; r < 4; ++r) {
    double mean = 0, variance = 0;
    for (int c = 0; c < 5; ++c) mean += xv[r * 5 + c] / 5;
    for (int c = 0; c < 5; ++c) variance += (xv[r * 5 + c] - mean) * (xv[r * 5 + c] - mean) / 5;
    for (int c = 0; c < 5; ++c)
      expected[r * 5 + c] = (xv[r * 5 + c] - mean) / std::sqrt(variance + 1e-5) * wv[c] + bv[c];
  }
  check_close(agf::ops::layer_norm_forward(x, w, b, 1e-5).y.to_double_vector(), expected);
  CHECK_THROWS_WITH(agf::ops::layer_norm_forward(x, random_tensor({4}, 1), b, 1e-5),
                    Catch::Contains("weight and bias must be [5]"));
}

TEST_CASE("embedding gathers rows and its backward scatter-adds", "[ops][embedding]") {
  const Tensor table = random_tensor({5, 3}, 19);
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{4, 0, 4}, {3}, DType::i32);
  const Tensor out = agf::ops::embedding_forward(table, ids);
  CHECK(out.shape() == Shape{3, 3});
  check_close(out.select(0, 0).to_double_vector(), table.select(0, 4).to_double_vector());
  check_close(out.select(0, 1).to_double_vector(), table.select(0, 0).to_double_vector());
  const Tensor grad = agf::ops::embedding_backward(Tensor::ones({3, 3}, DType::f64), ids, 5);
  check_close(grad.to_double_vector(), {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2});
  CHECK_THROWS_WITH(agf::ops::embedding_forward(table, Tensor::from_vector(std::vector<int64_t>{5}, {1})),
                    Catch::Contains("id 5 at position 0 is outside [0, 5)"));
}

TEST_CASE("embedding_backward sums each row's gradients in id order, for widths across its column blocks",
          "[ops][embedding]") {
  // Widths below, at and across the 16-column blocks; enough ids (with repeats) for the threaded loop.
  for (const int64_t features : {1, 16, 37}) {
    const int64_t count = 5000, vocabulary = 97;
    std::vector<int64_t> id_values(count);
    for (int64_t i = 0; i < count; ++i) id_values[static_cast<std::size_t>(i)] = (i * 7919) % vocabulary;
    const Tensor ids = Tensor::from_vector(id_values, {count});
    const Tensor grad = random_tensor({count, features}, 24, DType::f32);
    const std::vector<double> g = grad.to_double_vector();
    std::vector<float> expected(static_cast<std::size_t>(vocabulary * features), 0.0f);
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t c = 0; c < features; ++c) {
        expected[static_cast<std::size_t>(id_values[static_cast<std::size_t>(i)] * features + c)] += static_cast<float>(
            g[static_cast<std::size_t>(i * features + c)]);
      }
    }
    const std::vector<double> actual = agf::ops::embedding_backward(grad, ids, vocabulary).to_double_vector();
    INFO("features " << features);
    REQUIRE(actual.size() == expected.size());
    int64_t unequal = 0;
    for (std::size_t e = 0; e < expected.size(); ++e) unequal += actual[e] != static_cast<double>(expected[e]);
    CHECK(unequal == 0);  // the same sums in the same order: bit for bit
  }
}

TEST_CASE("dropout keeps a 1-p share, scales by 1/(1-p), and backward replays the mask", "[ops][dropout]") {
  const Tensor x = Tensor::ones({100000}, DType::f64);
  const Tensor y = agf::ops::dropout_forward(x, 0.25, 9, 3);
  const auto values = y.to_double_vector();
  int64_t kept = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const bool keep = agf::uniform_from_bits(agf::Philox4x32::bits(9, 3, i)) >= 0.25f;
    REQUIRE(values[i] == (keep ? 1 / 0.75 : 0.0));
    kept += keep;
  }
  CHECK(kept / 100000.0 == Approx(0.75).margin(0.01));
  CHECK(agf::ops::dropout_backward(x, 0.25, 9, 3).to_double_vector() == values);
  CHECK(agf::ops::dropout_forward(x, 0.25, 9, 4).to_double_vector() != values);
  CHECK_THROWS_WITH(agf::ops::dropout_forward(x, 1.0, 9, 3), Catch::Contains("probability must be in [0, 1)"));
}

TEST_CASE("cross_entropy with label smoothing equals PyTorch's definition", "[ops][cross_entropy]") {
  const Tensor logits = agf::ops::mul_scalar(random_tensor({3, 4}, 20), 3);
  const Tensor targets = Tensor::from_vector(std::vector<int64_t>{1, -100, 3}, {3});
  const auto z = logits.to_double_vector();
  const double eps = 0.1;
  double total = 0;
  for (int r : {0, 2}) {
    double top = -1e300, sum_exp = 0;
    for (int v = 0; v < 4; ++v) top = std::max(top, z[r * 4 + v]);
    for (int v = 0; v < 4; ++v) sum_exp += std::exp(z[r * 4 + v] - top);
    const double lse = top + std::log(sum_exp);
    const int y = r == 0 ? 1 : 3;
    double smooth = 0;
    for (int v = 0; v < 4; ++v) smooth += (lse - z[r * 4 + v]) / 4;
    total += (1 - eps) * (lse - z[r * 4 + y]) + eps * smooth;
  }
  const agf::ops::CrossEntropyOptions options{.label_smoothing = eps, .ignore_index = -100};
  CHECK(agf::ops::cross_entropy_forward(logits, targets, options).item() == Approx(total / 2).epsilon(1e-12));
  const Tensor all_ignored = Tensor::from_vector(std::vector<int64_t>{-100, -100, -100}, {3});
  CHECK(agf::ops::cross_entropy_forward(logits, all_ignored, options).item() == 0.0);
  CHECK_THROWS_WITH(agf::ops::cross_entropy_forward(logits, Tensor::from_vector(std::vector<int64_t>{0, 4, 1}, {3}),
                                                    options),
                    Catch::Contains("target 4 at row 1 is outside [0, 4)"));
}

TEST_CASE("cross_entropy_backward gives an ignored row a zero gradient, whatever its memory held before",
          "[ops][cross_entropy]") {
  // 3 × 30,000 f32 is 360 KB: a block the CPU allocator caches. With the cache emptied first, the gradient
  // reuses the nan-filled block freed just before it (its rows are written, not zeroed first).
  const Tensor logits = random_tensor({3, 30000}, 23, DType::f32);
  const Tensor targets = Tensor::from_vector(std::vector<int64_t>{5, -100, 29999}, {3});
  agf::cpu_release_cached();
  const Tensor one = Tensor::full({}, 1.0, DType::f32);
  { const Tensor garbage = Tensor::full({3, 30000}, std::nan(""), DType::f32); }
  const Tensor grad = agf::ops::cross_entropy_backward(one, logits, targets,
                                                       {.label_smoothing = 0.1, .ignore_index = -100});
  const std::vector<double> g = grad.to_double_vector();
  int64_t nonzero_in_ignored = 0;
  double row0 = 0;
  for (int64_t v = 0; v < 30000; ++v) {
    nonzero_in_ignored += g[30000 + v] != 0.0;
    row0 += g[v];
  }
  CHECK(nonzero_in_ignored == 0);
  CHECK(std::abs(row0) < 1e-5);  // softmax − smoothed one-hot sums to 0 in a counted row
}

TEST_CASE("concat joins along an axis and its backward slices the gradient", "[ops][concat]") {
  const Tensor a = random_tensor({2, 2}, 21), b = random_tensor({2, 1}, 22);
  const Tensor c = agf::ops::concat({a, b}, -1);
  CHECK(c.shape() == Shape{2, 3});
  const auto av = a.to_double_vector(), bv = b.to_double_vector();
  check_close(c.to_double_vector(), {av[0], av[1], bv[0], av[2], av[3], bv[1]});
  const auto grads = agf::ops::concat_backward(c, {a.shape(), b.shape()}, 1);
  check_close(grads[0].to_double_vector(), av);
  check_close(grads[1].to_double_vector(), bv);
  CHECK_THROWS_WITH(agf::ops::concat({a, random_tensor({3, 1}, 23)}, 1), Catch::Contains("part 1 is f64[3, 1]"));
}
