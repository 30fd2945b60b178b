// The cuBLAS call of the GPU matmul, checked without a GPU: plan_gemm's column-major strided-batched
// GEMM (operands, transposes, leading dimensions, batch strides, the folded batch) is executed here by a
// reference loop that reads memory exactly as BLAS defines it, and must give the CPU matmul's result,
// write every output element once, read only inside the operands' storage and respect BLAS's bounds on
// the leading dimensions.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "core/random.h"
#include "ops/matmul.h"
#include "ops/matmul_plan.h"

using namespace agf;

namespace {

// Small integers, so that any order of summation gives the exact product.
Tensor integers(const Shape& shape, uint64_t seed) {
  Generator generator(seed);
  const Tensor u = uniform(shape, generator, 0.0, 1.0, DType::f64);
  std::vector<double> values = u.to_double_vector();
  for (double& v : values) v = std::floor(v * 7) - 3;
  return Tensor::from_vector(values, shape, DType::f64);
}

// Element `index` of an operand's memory, relative to its data pointer, checked to lie in its storage.
double read(const ops::GemmOperand& operand, int64_t index) {
  const int64_t position = operand.tensor.offset() + index;
  const int64_t stored = static_cast<int64_t>(operand.tensor.storage()->bytes() / sizeof(double));
  REQUIRE(position >= 0);
  REQUIRE(position < stored);
  return operand.tensor.data<double>()[index];
}

// BLAS's C_p = op(A_p)·op(B_p), column-major, for every batch p, into a fresh contiguous out.
Tensor run(const ops::GemmPlan& plan, const Shape& out_shape) {
  const int64_t m = plan.m, n = plan.n, k = plan.k;
  REQUIRE(plan.first.ld >= std::max<int64_t>(1, plan.first.transpose ? k : m));
  REQUIRE(plan.second.ld >= std::max<int64_t>(1, plan.second.transpose ? n : k));
  REQUIRE(plan.ldc >= std::max<int64_t>(1, m));
  Tensor out = Tensor::full(out_shape, NAN, DType::f64);
  std::vector<int> written(static_cast<std::size_t>(out.numel()), 0);
  double* c = out.data<double>();
  for (int64_t p = 0; p < plan.batch_count; ++p) {
    const int64_t a0 = p * plan.first.batch_stride, b0 = p * plan.second.batch_stride;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) {
        double total = 0;
        for (int64_t l = 0; l < k; ++l) {
          // op(A)[i, l] and op(B)[l, j] of column-major storage with leading dimensions lda, ldb.
          const double x = read(plan.first,
                                a0 + (plan.first.transpose ? l + i * plan.first.ld : i + l * plan.first.ld));
          const double y = read(plan.second,
                                b0 + (plan.second.transpose ? j + l * plan.second.ld : l + j * plan.second.ld));
          total += x * y;
        }
        const int64_t at = p * plan.c_batch_stride + i + j * plan.ldc;
        REQUIRE(at >= 0);
        REQUIRE(at < out.numel());
        c[at] = total;
        ++written[static_cast<std::size_t>(at)];
      }
    }
  }
  for (int count : written) REQUIRE(count == 1);
  return out;
}

struct Case {
  const char* name;
  Shape a_shape;
  Shape b_shape;
  std::function<std::pair<Tensor, Tensor>(const Tensor&, const Tensor&)> views;
  int64_t expected_batch_count;  // -1: do not check
};

std::pair<Tensor, Tensor> as_is(const Tensor& a, const Tensor& b) { return {a, b}; }

}  // namespace

TEST_CASE("plan_gemm's column-major call computes the row-major product for every layout", "[ops][matmul]") {
  // clang-format off
  const std::vector<Case> cases{
      {"[5,7] @ [7,3]", {5, 7}, {7, 3}, as_is, 1},
      {"Aᵀ @ B", {7, 5}, {7, 3}, [](const Tensor& a, const Tensor& b) { return std::pair{a.transpose(0, 1), b}; }, 1},
      {"A @ Bᵀ", {5, 7}, {3, 7}, [](const Tensor& a, const Tensor& b) { return std::pair{a, b.transpose(0, 1)}; }, 1},
      {"Aᵀ @ Bᵀ", {7, 5}, {3, 7},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.transpose(0, 1), b.transpose(0, 1)}; }, 1},
      {"sliced A", {5, 14}, {7, 3}, [](const Tensor& a, const Tensor& b) { return std::pair{a.slice(1, 0, 14, 2), b}; }, 1},
      {"column slices", {5, 20}, {9, 3},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.slice(1, 3, 10), b.slice(0, 2, 9)}; }, 1},
      {"one row", {1, 7}, {7, 9}, as_is, 1},
      {"one column", {6, 7}, {7, 1}, as_is, 1},
      {"K = 1", {6, 1}, {1, 4}, as_is, 1},
      {"[1,K] from a transposed column", {7, 1}, {7, 4},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.transpose(0, 1), b}; }, 1},
      {"[M,1] from a transposed row", {1, 6}, {1, 4},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.transpose(0, 1), b}; }, 1},
      {"vector @ matrix", {7}, {7, 4}, as_is, 1},
      {"matrix @ vector", {4, 7}, {7}, as_is, 1},
      {"vector @ vector", {7}, {7}, as_is, 1},
      {"vector @ batched", {4}, {2, 4, 3}, as_is, 2},
      {"batched @ vector (folded)", {2, 3, 4}, {4}, as_is, 1},
      {"[B,T,K] @ [K,N] (folded)", {3, 5, 8}, {8, 6}, as_is, 1},
      {"[B,T,K] @ Wᵀ (folded)", {3, 5, 8}, {6, 8},
       [](const Tensor& a, const Tensor& b) { return std::pair{a, b.transpose(0, 1)}; }, 1},
      {"sliced rows of [B,T,K] (not folded)", {3, 6, 8}, {8, 6},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.slice(1, 0, 5), b}; }, 3},
      {"A transposed per batch, B shared", {3, 8, 5}, {8, 6},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.transpose(-1, -2), b}; }, 3},
      {"[M,K] @ [B,K,N]", {5, 8}, {4, 8, 6}, as_is, 4},
      {"batched, both transposed", {2, 3, 7, 5}, {2, 3, 4, 7},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.transpose(-1, -2), b.transpose(-1, -2)}; }, 6},
      {"[2,1,4,3] @ [3,3,2] (A copied)", {2, 1, 4, 3}, {3, 3, 2}, as_is, 6},
      {"heads view (both copied)", {2, 6, 3, 4}, {2, 6, 3, 4},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.transpose(1, 2), b.transpose(1, 2).transpose(-1, -2)}; }, 6},
      {"unit batch axes (folded)", {1, 3, 1, 4, 5}, {1, 1, 5, 2}, as_is, 1},
      {"batch slice with a step", {6, 4, 5}, {5, 3},
       [](const Tensor& a, const Tensor& b) { return std::pair{a.slice(0, 0, 6, 2), b}; }, 3},
  };
  // clang-format on
  uint64_t seed = 1;
  for (const Case& c : cases) {
    INFO(c.name);
    const auto [a, b] = c.views(integers(c.a_shape, seed), integers(c.b_shape, seed + 1));
    seed += 2;
    const ops::MatmulOperands operands = ops::matmul_operands(a, b);
    const Tensor out = Tensor::empty(operands.out_shape, DType::f64);
    const ops::GemmPlan plan = ops::plan_gemm(operands.a, operands.b, out);
    if (c.expected_batch_count >= 0) CHECK(plan.batch_count == c.expected_batch_count);
    const Tensor result = ops::matmul_result(run(plan, operands.out_shape), a, b);
    REQUIRE(result.to_double_vector() == ops::matmul(a, b).to_double_vector());
  }
}

TEST_CASE("plan_gemm reads transposed views and shared matrices in place", "[ops][matmul]") {
  const Tensor w = integers({6, 8}, 50);
  const Tensor x = integers({4, 5, 8}, 51);
  const ops::MatmulOperands operands = ops::matmul_operands(x, w.transpose(0, 1));
  const ops::GemmPlan plan = ops::plan_gemm(operands.a, operands.b, Tensor::empty(operands.out_shape, DType::f64));
  // Wᵀ is column-major: read with OP_T from W's own storage; x's 4 batches fold into 20 rows.
  CHECK(plan.first.transpose);
  CHECK(plan.first.tensor.storage() == w.storage());
  CHECK_FALSE(plan.second.transpose);
  CHECK(plan.second.tensor.storage() == x.storage());
  CHECK(plan.n == 20);
  CHECK(plan.batch_count == 1);
}
