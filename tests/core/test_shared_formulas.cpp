// The formulas shared by the CPU and the CUDA kernels (AGF_HOST_DEVICE headers), checked on the CPU:
// the uniform and Box–Muller values, the dropout keep test, the label-smoothed row loss and Adam's
// element update — and that the CPU ops use exactly these.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>

// functions.h first: agf::log and agf::sqrt of Variables must not hide the C library's in the shared headers.
#include "autograd/functions.h"
#include "core/random.h"
#include "core/random_values.h"
#include "ops/cross_entropy.h"
#include "ops/cross_entropy_row.h"
#include "ops/dropout.h"
#include "ops/dropout_mask.h"
#include "train/adam_update.h"

using namespace agf;

TEST_CASE("fills use the shared uniform and Box-Muller formulas", "[core][random]") {
  CHECK(kTwoPi == 2.0 * std::numbers::pi);
  Generator generator(31, 4);
  const std::vector<double> u = uniform({7}, generator, -2.0, 3.0, DType::f64).to_double_vector();
  for (uint64_t i = 0; i < 7; ++i) {
    const double expected = std::fma(5.0, static_cast<double>(uniform_from_bits(Philox4x32::bits(31, 4, i))), -2.0);
    CHECK(u[i] == expected);
    CHECK(uniform_value(Philox4x32::bits(31, 4, i), -2.0, 3.0) == expected);
  }
  const uint64_t offset = generator.offset();
  const std::vector<double> n = normal({5}, generator, 1.0, 2.0, DType::f64).to_double_vector();
  for (uint64_t i = 0; i < 5; ++i) {
    const uint64_t pair = i & ~uint64_t{1};
    const double u1 = open_uniform_from_bits(Philox4x32::bits(31, offset, pair));
    const double u2 = open_uniform_from_bits(Philox4x32::bits(31, offset, pair + 1));
    const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * std::numbers::pi * u2;
    CHECK(n[i] == std::fma(2.0 * radius, (i & 1) ? std::sin(angle) : std::cos(angle), 1.0));
  }
}

TEST_CASE("dropout keeps an element when its uniform is at least p", "[ops][dropout]") {
  // uniform_from_bits keeps the top 24 bits: 0x80000000 is exactly 0.5.
  CHECK(ops::dropout_keeps(0x80000000u, ops::dropout_threshold(0.5)));
  CHECK(!ops::dropout_keeps(0x7fffffffu, ops::dropout_threshold(0.5)));
  CHECK(ops::dropout_keeps(0u, ops::dropout_threshold(0.0)));
  const Tensor x = Tensor::ones({9}, DType::f64);
  const std::vector<double> y = ops::dropout_forward(x, 0.4, 3, 2).to_double_vector();
  for (uint64_t i = 0; i < 9; ++i) {
    const bool keep = ops::dropout_keeps(Philox4x32::bits(3, 2, i), ops::dropout_threshold(0.4));
    CHECK(y[i] == (keep ? 1.0 / 0.6 : 0.0));
  }
}

TEST_CASE("the label-smoothed row loss is the cross-entropy of one row", "[ops][cross_entropy]") {
  const std::vector<double> z{0.5, -1.0, 2.0};
  const double lse = std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0));
  const double mean = (0.5 - 1.0 + 2.0) / 3;
  CHECK(ops::smoothed_row_loss(lse, 2.0, mean, 0.0) == Approx(lse - 2.0));
  CHECK(ops::smoothed_row_loss(lse, 2.0, mean, 1.0) == Approx(lse - mean));
  const Tensor logits = Tensor::from_vector(z, {1, 3}, DType::f64);
  const Tensor loss = ops::cross_entropy_forward(logits, Tensor::from_vector(std::vector<int64_t>{1}, {1}),
                                                 {0.2, -100});
  CHECK(loss.item() == Approx(ops::smoothed_row_loss(lse, -1.0, mean, 0.2)).epsilon(1e-14));
}

TEST_CASE("adam_update is one step of Adam written out", "[train][adam]") {
  const train::AdamConstants k{0.9, 0.98, 1e-9, 0.1, 1 - 0.9, 1 - 0.98};
  double theta = 1.0, m = 0.0, v = 0.0;
  train::adam_update(theta, m, v, 2.0, k);
  CHECK(m == Approx(0.2));
  CHECK(v == Approx(0.08));
  CHECK(theta == Approx(1.0 - 0.1 * (0.2 / 0.1) / (std::sqrt(0.08 / 0.02) + 1e-9)));
}
