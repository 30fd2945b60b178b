// ops/cpu/lane_sum.h: the lanes' sum against a plain running sum, for every length around the lane count, and
// its fixed order.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "ops/cpu/lane_sum.h"

using agf::ops::cpu::lane_sum;

TEST_CASE("lane_sum adds every term once, for lengths around the lane count", "[ops][reduce]") {
  // Integer terms: every order of summation gives the exact total, so any term missed, repeated or taken from
  // the wrong index shows.
  for (int64_t n = 0; n <= 4 * agf::ops::cpu::kSumLanes + 3; ++n) {
    double expected = 0;
    for (int64_t i = 0; i < n; ++i) expected += static_cast<double>(i * i + 1);
    INFO("n " << n);
    CHECK(lane_sum(n, [](int64_t i) { return static_cast<double>(i * i + 1); }) == expected);
  }
}

TEST_CASE("lane_sum sums in lanes added pairwise: a fixed order, within rounding of the running sum", "[ops][reduce]") {
  std::vector<double> terms(1001);
  for (std::size_t i = 0; i < terms.size(); ++i) terms[i] = std::sin(static_cast<double>(i)) * 1e3 + 1e-3;
  const auto term = [&terms](int64_t i) { return terms[static_cast<std::size_t>(i)]; };
  // The order the header states, written out: lane l takes i ≡ l (mod 8), then (0+4)+(2+6) and (1+5)+(3+7).
  double lanes[8] = {};
  for (std::size_t i = 0; i < terms.size(); ++i) lanes[i % 8] += terms[i];
  const double stated = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) +
                        ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
  CHECK(lane_sum(1001, term) == stated);
  double running = 0;
  for (const double t : terms) running += t;
  CHECK(std::abs(lane_sum(1001, term) - running) <= 1e-12 * std::abs(running) + 1e-9);
}
