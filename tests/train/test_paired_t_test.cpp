// Student's t distribution and the paired t-test over seeds (train/paired_t_test.h): the two-sided tail against
// the closed forms for ν = 1 (1 - 2·atan|t|/π) and ν = 2 (1 - |t|/√(t² + 2)); the critical values of the usual
// tables; a paired test worked by hand; equal differences; the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "train/paired_t_test.h"

using agf::train::paired_t_test;
using agf::train::students_t_critical;
using agf::train::students_t_two_sided_p;

TEST_CASE("Student's t two-sided tail matches its closed forms for 1 and 2 degrees of freedom", "[train][stats]") {
  for (double t : {0.0, 0.3, 1.0, 2.5, 4.302653, 12.7, 100.0, -3.0}) {
    CAPTURE(t);
    CHECK(students_t_two_sided_p(t, 1) == Approx(1 - 2 * std::atan(std::abs(t)) / std::numbers::pi).margin(1e-12));
    CHECK(students_t_two_sided_p(t, 2) == Approx(1 - std::abs(t) / std::sqrt(t * t + 2)).margin(1e-12));
  }
  CHECK(students_t_two_sided_p(INFINITY, 3) == 0);
  // Many degrees of freedom: the normal distribution's 1.959964.
  CHECK(students_t_two_sided_p(1.959964, 1e7) == Approx(0.05).margin(1e-6));
}

TEST_CASE("Student's t critical values are the tables'", "[train][stats]") {
  CHECK(students_t_critical(0.05, 1) == Approx(12.706205).margin(1e-5));
  CHECK(students_t_critical(0.05, 2) == Approx(4.302653).margin(1e-5));
  CHECK(students_t_critical(0.10, 2) == Approx(2.919986).margin(1e-5));
  CHECK(students_t_critical(0.05, 10) == Approx(2.228139).margin(1e-5));
  CHECK(students_t_critical(0.01, 30) == Approx(2.749996).margin(1e-5));
  CHECK(students_t_critical(1.0, 4) == Approx(0).margin(1e-9));
  CHECK_THROWS_WITH(students_t_critical(0, 2), Catch::Contains("in (0, 1]"));
  CHECK_THROWS_WITH(students_t_two_sided_p(1, 0), Catch::Contains("positive degrees of freedom"));
}

TEST_CASE("the paired t-test over seeds, worked by hand", "[train][stats]") {
  // d = 1.0, 0.8, 1.2: d̄ = 1, s_d = 0.2, se = 0.2/√3, t = 5√3 = 8.660, ν = 2: p = 1 - t/√(t² + 2) = 1 - √(75/77).
  const auto test = paired_t_test({1.0, 0.8, 1.2});
  CHECK(test.seeds == 3);
  CHECK(test.mean == Approx(1));
  CHECK(test.p_value == Approx(1 - std::sqrt(75.0 / 77.0)).margin(1e-12));
  CHECK(test.low == Approx(1 - 4.302653 * 0.2 / std::sqrt(3.0)).margin(1e-5));
  CHECK(test.high == Approx(1 + 4.302653 * 0.2 / std::sqrt(3.0)).margin(1e-5));
  // Agreeing in sign is not enough: 2.0, 0.1, 1.0 has t = 1.88, p = 0.20.
  CHECK(paired_t_test({2.0, 0.1, 1.0}).p_value > 0.05);
  // A narrower interval at 90 %: t_2 = 2.919986.
  const auto at_90 = paired_t_test({1.0, 0.8, 1.2}, 0.90);
  CHECK(at_90.high - at_90.mean == Approx(2.919986 * 0.2 / std::sqrt(3.0)).margin(1e-5));
}

TEST_CASE("the paired t-test with equal differences, and its errors", "[train][stats]") {
  const auto same = paired_t_test({0.5, 0.5, 0.5});
  CHECK(same.p_value == 0);
  CHECK(same.low == 0.5);
  CHECK(same.high == 0.5);
  CHECK(paired_t_test({0.0, 0.0}).p_value == 1);
  CHECK_THROWS_WITH(paired_t_test({1.0}), Catch::Contains("at least 2 seeds"));
  CHECK_THROWS_WITH(paired_t_test({1.0, 2.0}, 1.0), Catch::Contains("confidence must be in (0, 1)"));
}
