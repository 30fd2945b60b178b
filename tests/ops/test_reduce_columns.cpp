// Reductions over the leading axes of a contiguous tensor (summed down columns, no copy) against the same
// reduction over the last axes of the transposed copy (the row path): equal bit for bit.
#include <catch2/catch.hpp>

#include "core/random.h"
#include "ops/reduce.h"

using agf::DType;
using agf::Tensor;

TEST_CASE("sum, mean and max over leading axes equal the row reduction of the transpose, bit for bit",
          "[ops][reduce]") {
  agf::Generator generator(3);
  for (DType dtype : {DType::f32, DType::f64}) {
    // [rows, columns] with more columns than one block of accumulators, and [2, 3, 700] reduced over {0, 1}
    const Tensor x = agf::uniform({37, 600}, generator, -1, 1, dtype);
    const Tensor rows_last = x.transpose(0, 1).contiguous();  // [600, 37]
    CHECK(agf::ops::sum(x, {0}).to_double_vector() == agf::ops::sum(rows_last, {1}).to_double_vector());
    CHECK(agf::ops::mean(x, {0}).to_double_vector() == agf::ops::mean(rows_last, {1}).to_double_vector());
    CHECK(agf::ops::max(x, {0}).to_double_vector() == agf::ops::max(rows_last, {1}).to_double_vector());
    CHECK(agf::ops::sum(x, {0}, true).shape() == agf::Shape{1, 600});
    CHECK(agf::ops::sum_to(x, {600}).to_double_vector() == agf::ops::sum(rows_last, {1}).to_double_vector());

    const Tensor y = agf::uniform({2, 3, 700}, generator, -1, 1, dtype);
    const Tensor y_rows = y.permute({2, 0, 1}).contiguous();  // [700, 2, 3]
    CHECK(agf::ops::sum(y, {0, 1}).to_double_vector() == agf::ops::sum(y_rows, {1, 2}).to_double_vector());
    // one value per column, by hand
    const std::vector<double> values = y.to_double_vector(), sums = agf::ops::sum(y, {0, 1}).to_double_vector();
    double column_5 = 0;
    for (int r = 0; r < 6; ++r) column_5 += values[r * 700 + 5];
    CHECK(sums[5] == Approx(column_5).epsilon(dtype == DType::f32 ? 1e-6 : 1e-14));
  }
}
