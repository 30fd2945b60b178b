// ops/cpu/vector_exp.h (Eigen's packet exp) against std::exp, in ulp, over the range softmax rows use.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/vector_exp.h"

namespace {

// The distance from `actual` to `expected` in units of `expected`'s last place.
template <class T>
double ulps(T actual, T expected) {
  if (actual == expected) return 0;
  const T spacing = std::nextafter(expected, std::numeric_limits<T>::infinity()) - expected;
  return std::abs(static_cast<double>(actual) - static_cast<double>(expected)) / static_cast<double>(spacing);
}

template <class T>
void check_exp(double max_ulps) {
  // x - shift from -100 to 0 (softmax arguments are ≤ 0), odd length so that a partial packet is used
  std::vector<T> x;
  for (int i = 0; i <= 20001; ++i) x.push_back(static_cast<T>(-100.0 + 100.0 * i / 20001.0 + 3.0));
  x.push_back(-std::numeric_limits<T>::infinity());  // a masked score: exp gives 0
  std::vector<T> out(x.size());
  // A masked score at every position of a SIMD packet, not only in the scalar tail: exactly 0 everywhere.
  std::vector<T> masked(19, T(0.5)), masked_out(19);
  for (int64_t at = 0; at < 17; ++at) {
    masked[at] = -std::numeric_limits<T>::infinity();
    agf::ops::cpu::exp_shifted(masked.data(), T(0), masked_out.data(), 19);
    INFO("-inf at " << at);
    CHECK(masked_out[at] == T(0));
    masked[at] = T(0.5);
  }
  const T total = agf::ops::cpu::exp_shifted(x.data(), T(3), out.data(), static_cast<int64_t>(x.size()));
  double worst = 0, expected_total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T expected = std::exp(x[i] - T(3));
    expected_total += static_cast<double>(expected);
    if (expected < std::numeric_limits<T>::min()) {
      CHECK(out[i] <= std::numeric_limits<T>::min());  // underflow: zero or a denormal, never garbage
      continue;
    }
    worst = std::max(worst, ulps(out[i], expected));
  }
  CHECK(out.back() == T(0));
  CHECK(worst <= max_ulps);
  CHECK(static_cast<double>(total) == Approx(expected_total).epsilon(1e3 * std::numeric_limits<T>::epsilon()));
  CHECK(static_cast<double>(agf::ops::cpu::sum_exp_shifted(x.data(), T(3), static_cast<int64_t>(x.size()))) ==
        Approx(expected_total).epsilon(1e3 * std::numeric_limits<T>::epsilon()));
  CHECK(agf::ops::cpu::row_max(x.data(), static_cast<int64_t>(x.size())) == x[x.size() - 2]);
}

// Every row length up to three packets, so that each size of partial last packet is met, in place as the
// attention kernel calls it, with a masked score in the partial packet.
template <class T>
void check_every_length(double max_ulps) {
  constexpr int64_t lanes = agf::ops::cpu::kExpLanes<T>;
  for (int64_t length = 1; length <= 3 * lanes; ++length) {
    std::vector<T> x(static_cast<std::size_t>(length));
    for (int64_t i = 0; i < length; ++i) x[i] = static_cast<T>(-0.37 * static_cast<double>(i) + 0.25);
    if (length % lanes > 1) x[length - 1] = -std::numeric_limits<T>::infinity();
    double expected_total = 0;
    std::vector<T> expected(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      expected[i] = std::exp(x[i] - T(0.25));
      expected_total += static_cast<double>(expected[i]);
    }
    const T summed = agf::ops::cpu::sum_exp_shifted(x.data(), T(0.25), length);
    const T total = agf::ops::cpu::exp_shifted(x.data(), T(0.25), x.data(), length);
    INFO("length " << length);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(ulps(x[i], expected[i]) <= max_ulps);
    CHECK(static_cast<double>(total) == Approx(expected_total).epsilon(8 * std::numeric_limits<T>::epsilon()));
    CHECK(static_cast<double>(summed) ==
          Approx(static_cast<double>(total)).epsilon(4 * std::numeric_limits<T>::epsilon()));
  }
}

}  // namespace

TEST_CASE("the vectorized exp handles every length of a partial last packet", "[ops][softmax]") {
  check_every_length<float>(2);
  check_every_length<double>(2);
}

TEST_CASE("the vectorized exp is within a few ulp of std::exp", "[ops][softmax]") {
  check_exp<float>(2);
  check_exp<double>(2);
  CHECK(agf::ops::cpu::exp_shifted<float>(nullptr, 0.0f, nullptr, 0) == 0.0f);
  CHECK(agf::ops::cpu::row_max<double>(nullptr, 0) == -std::numeric_limits<double>::infinity());
}
