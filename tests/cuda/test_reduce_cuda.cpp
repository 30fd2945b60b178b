// Reductions on a GPU against the CPU: sum, mean and max over any axes with and without keepdim, on
// every kernel shape (one warp per short row, one block per long row, two passes for few very long
// rows), on strided inputs; exact sums and maxima of integer values in every dtype; the backwards
// (max's tie rule), sum_to, and the errors.
#include <catch2/catch.hpp>

#include "ops/reduce.h"
#include "tests/cuda/op_compare.h"

using namespace agf;
using testing::compare_with_cpu;
using testing::Tensors;

namespace {

struct ReductionCase {
  Shape shape;
  ops::Axes axes;
};

// Covers: all axes, leading/trailing/middle axes, rows of 1, 31, 33, 1024, 1025 elements (warp kernel up
// to 1024, block kernel above), many rows (≥ 1024: one block per long row), few long rows (two passes:
// segments, then the partial results).
std::vector<ReductionCase> reduction_cases() {
  return {
      {{2, 3, 4}, {}},  {{2, 3, 4}, {0, 2}}, {{2, 3, 4}, {1}},   {{2, 3, 4}, {-1, 0}},
      {{37, 129}, {0}}, {{37, 129}, {1}},    {{5, 1}, {1}},      {{7, 31}, {1}},
      {{7, 33}, {1}},   {{3, 1024}, {1}},    {{3, 1025}, {1}},   {{1200, 1100}, {1}},
      {{3, 5000}, {1}}, {{1 << 20}, {}},     {{4, 300, 7}, {1}}, {{2, 8, 2, 300}, {1, 3}},
  };
}

// Accumulation order differs (the CPU adds in f64 left to right, the GPU in f32 by a tree): allow for
// rounding that grows with the row length.
testing::Tolerance sum_tolerance(DType dtype, int64_t length) {
  const double scale = std::sqrt(static_cast<double>(std::max<int64_t>(length, 1)));
  switch (dtype) {
    case DType::f64: return {1e-12, 1e-14 * scale};
    case DType::f32: return {1e-5, 2e-6 * scale};
    case DType::f16: return {2e-3, 2e-3 * scale};
    case DType::bf16: return {1.6e-2, 1.6e-2 * scale};
    default: return {0, 0};
  }
}

int64_t reduced_length(const Shape& shape, const ops::Axes& axes) {
  if (axes.empty()) return shape_numel(shape);
  int64_t length = 1;
  for (int64_t axis : axes) length *= shape[axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis];
  return length;
}

}  // namespace

TEST_CASE("GPU sum, mean and max equal the CPU's over any axes", "[cuda][gpu][reduce]") {
  AGF_REQUIRE_GPU();
  uint64_t seed = 300;
  for (const ReductionCase& c : reduction_cases()) {
    const Tensor x = testing::random_f64(c.shape, seed++, -2, 2);
    const int64_t length = reduced_length(c.shape, c.axes);
    const std::string name = shape_string(c.shape) + " over " + std::to_string(c.axes.size()) + " axes";
    auto tolerance = [length](DType dtype) { return sum_tolerance(dtype, length); };
    auto mean_tolerance = [length](DType dtype) {
      const testing::Tolerance t = sum_tolerance(dtype, length);
      return testing::Tolerance{t.rtol, t.atol / static_cast<double>(std::max<int64_t>(length, 1))};
    };
    auto exact = [](DType) { return testing::Tolerance{0, 0}; };
    for (bool keepdim : {false, true}) {
      const ops::Axes axes = c.axes;
      compare_with_cpu(
          "sum " + name, {x}, [&](const Tensors& t) { return ops::sum(t[0], axes, keepdim); }, testing::identity_views,
          tolerance);
      compare_with_cpu(
          "mean " + name, {x}, [&](const Tensors& t) { return ops::mean(t[0], axes, keepdim); },
          testing::identity_views, mean_tolerance);
      // A maximum is one of the inputs: exact in every dtype.
      compare_with_cpu(
          "max " + name, {x}, [&](const Tensors& t) { return ops::max(t[0], axes, keepdim); }, testing::identity_views,
          exact);
    }
  }
}

TEST_CASE("GPU reductions of strided inputs (permuted, sliced, broadcast)", "[cuda][gpu][reduce]") {
  AGF_REQUIRE_GPU();
  const Tensor x = testing::random_f64({6, 50, 40}, 400, -2, 2);
  const std::vector<std::pair<const char*, testing::TensorsFn>> layouts{
      {"permuted",
       [](const Tensors& t) {
         return Tensors{t[0].permute({2, 0, 1})};
       }},
      {"sliced", [](const Tensors& t) { return Tensors{t[0].slice(1, 1, 50, 3).slice(2, 0, 40, 2)}; }},
      {"broadcast",
       [](const Tensors& t) {
         return Tensors{t[0].slice(0, 0, 1).expand({4, 6, 50, 40}).select(1, 0)};
       }},
  };
  for (const auto& [layout, views] : layouts) {
    for (const ops::Axes& axes : std::vector<ops::Axes>{{}, {0}, {1}, {2}, {0, 2}}) {
      auto tolerance = [](DType dtype) { return sum_tolerance(dtype, 12000); };
      compare_with_cpu(
          std::string("sum, ") + layout, {x}, [&](const Tensors& t) { return ops::sum(t[0], axes); }, views, tolerance);
      compare_with_cpu(
          std::string("max, ") + layout, {x}, [&](const Tensors& t) { return ops::max(t[0], axes, true); }, views,
          [](DType) {
            return testing::Tolerance{0, 0};
          });
    }
  }
}

TEST_CASE("GPU sums of integer values are exact in every dtype and kernel shape", "[cuda][gpu][reduce]") {
  AGF_REQUIRE_GPU();
  // Integer partial sums stay below 2^24, so f32 accumulation is exact whatever the order; the f16/bf16
  // result is the exact sum rounded once, as the CPU's (rounded from its exact f32 result).
  auto exact = [](DType) { return testing::Tolerance{0, 0}; };
  for (const ReductionCase& c : reduction_cases()) {
    const Tensor x = testing::random_integers(c.shape, 500 + shape_numel(c.shape), -8, 8);
    const ops::Axes axes = c.axes;
    compare_with_cpu(
        "integer sum " + shape_string(c.shape), {x}, [&](const Tensors& t) { return ops::sum(t[0], axes); },
        testing::identity_views, exact);
  }
}

TEST_CASE("GPU max ignores NaN like the CPU, mean of nothing is NaN, sum of nothing is 0", "[cuda][gpu][reduce]") {
  AGF_REQUIRE_GPU();
  const Tensor x = Tensor::from_vector(std::vector<double>{1, NAN, 3, NAN, -2, 0}, {2, 3}, DType::f32);
  const Tensor gpu = x.to(Device::cuda());
  CHECK(ops::max(gpu, {1}).to(Device::cpu()).to_double_vector() == ops::max(x, {1}).to_double_vector());
  const Tensor none = Tensor::zeros({4, 0}, DType::f32, Device::cuda());
  CHECK(ops::sum(none, {1}).to(Device::cpu()).to_double_vector() == std::vector<double>(4, 0.0));
  for (double value : ops::mean(none, {1}).to(Device::cpu()).to_double_vector()) CHECK(std::isnan(value));
  CHECK(ops::sum(Tensor::zeros({0, 3}, DType::f32, Device::cuda()), {0}).shape() == Shape{3});
}

TEST_CASE("GPU reduction backwards and sum_to match the CPU, including max's ties", "[cuda][gpu][reduce]") {
  AGF_REQUIRE_GPU();
  // Integer values in a small range: many ties, each sharing its gradient equally (the CPU's rule).
  const Tensor x = testing::random_integers({6, 7, 9}, 600, -3, 3);
  for (const ops::Axes& axes : std::vector<ops::Axes>{{}, {1}, {0, 2}, {-1}}) {
    for (bool keepdim : {false, true}) {
      const Tensor y_shape_probe = ops::max(x, axes, keepdim);
      const Tensor g = testing::random_f64(y_shape_probe.shape(), 601, -1, 1);
      compare_with_cpu("max_backward", {g, x}, [&](const Tensors& t) {
        return ops::max_backward(t[0], t[1], ops::max(t[1], axes, keepdim), axes, keepdim);
      });
      compare_with_cpu(
          "sum_backward", {g}, [&](const Tensors& t) { return ops::sum_backward(t[0], x.shape(), axes, keepdim); },
          testing::identity_views,
          [](DType) {
            return testing::Tolerance{0, 0};
          });
      compare_with_cpu("mean_backward", {g},
                       [&](const Tensors& t) { return ops::mean_backward(t[0], x.shape(), axes, keepdim); });
    }
  }
  const Tensor grad = testing::random_f64({4, 3, 5}, 602, -1, 1);
  for (const Shape& shape : std::vector<Shape>{{3, 5}, {3, 1}, {1, 5}, {5}, {}, {4, 1, 1}, {4, 3, 5}}) {
    compare_with_cpu(
        "sum_to " + shape_string(shape), {grad}, [&](const Tensors& t) { return ops::sum_to(t[0], shape); },
        testing::identity_views, [](DType dtype) { return sum_tolerance(dtype, 60); });
  }
}

TEST_CASE("GPU reduction errors name the op as on the CPU", "[cuda][gpu][reduce]") {
  AGF_REQUIRE_GPU();
  const Tensor x = Tensor::zeros({2, 3, 4}, DType::f32, Device::cuda());
  CHECK_THROWS_WITH(ops::sum(x, {3}), Catch::Contains("axis 3 is out of range"));
  CHECK_THROWS_WITH(ops::sum(x, {1, -2}), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(ops::max(Tensor::zeros({0}, DType::f32, Device::cuda())),
                    Catch::Contains("max: reduction of an empty tensor"));
  CHECK_THROWS_WITH(ops::sum(Tensor::zeros({3}, DType::i64, Device::cuda())),
                    Catch::Contains("sum") && Catch::Contains("i64"));
}
