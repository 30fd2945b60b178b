// The mean and sample standard deviation every grid table and the t-test over seeds read
// (train/sample_summary.h), worked by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "train/sample_summary.h"

using agf::train::summarize;

TEST_CASE("summarize gives the mean and the sample (n - 1) standard deviation", "[train][stats]") {
  // 1, 2, 3, 4: mean 2.5, squares 2.25 + 0.25 + 0.25 + 2.25 = 5, sd = √(5/3)
  const auto four = summarize({1.0, 2.0, 3.0, 4.0});
  CHECK(four.mean == Approx(2.5).margin(1e-15));
  CHECK(four.standard_deviation == Approx(std::sqrt(5.0 / 3.0)).epsilon(1e-15));
  // the sample spread (divide by n - 1), not the population one: -1, 1 gives √2, not 1
  CHECK(summarize({-1.0, 1.0}).standard_deviation == Approx(std::sqrt(2.0)).epsilon(1e-15));
  const auto one = summarize({7.25});
  CHECK(one.mean == 7.25);
  CHECK(one.standard_deviation == 0);
  CHECK_THROWS_WITH(summarize({}), Catch::Contains("at least one value"));
}
