// matmul on a GPU (cuBLAS) against the CPU: every operand layout (row-major, transposed views, sliced
// copies), 1-D promotion, batch broadcasting (stride-0 batches, the folded [B,T,K] @ [K,N] case, batch
// axes that need a copy), empty sizes; exact products of small integers in every dtype; the backward;
// the errors.
#include <catch2/catch.hpp>

#include "ops/matmul.h"
#include "tests/cuda/op_compare.h"

using namespace agf;
using testing::compare_with_cpu;
using testing::Tensors;

namespace {

// f32 GEMMs sum K products in a different order (and cuBLAS may split K): error ~ √K·ulp·|a||b|.
testing::Tolerance gemm_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64: return {1e-12, 1e-12};
    case DType::f32: return {1e-5, 1e-5};
    case DType::f16: return {2e-3, 1e-2};
    case DType::bf16: return {1.6e-2, 5e-2};
    default: return {0, 0};
  }
}

testing::Tolerance exact(DType) { return {0, 0}; }

struct MatmulCase {
  const char* name;
  Shape a_shape;  // the contiguous tensors made on each device, before `views`
  Shape b_shape;
  testing::TensorsFn views;
};

Tensors transpose_last(const Tensors& t, bool a, bool b) {
  return {a ? t[0].transpose(-1, -2) : t[0], b ? t[1].transpose(-1, -2) : t[1]};
}

std::vector<MatmulCase> matmul_cases() {
  return {
      {"[5,7] @ [7,3]", {5, 7}, {7, 3}, testing::identity_views},
      {"Aᵀ @ B", {7, 5}, {7, 3}, [](const Tensors& t) { return transpose_last(t, true, false); }},
      {"A @ Bᵀ", {5, 7}, {3, 7}, [](const Tensors& t) { return transpose_last(t, false, true); }},
      {"Aᵀ @ Bᵀ", {7, 5}, {3, 7}, [](const Tensors& t) { return transpose_last(t, true, true); }},
      {"sliced A (copied)",
       {5, 14},
       {7, 3},
       [](const Tensors& t) {
         return Tensors{t[0].slice(1, 0, 14, 2), t[1]};
       }},
      {"column slices (row stride > cols)",
       {5, 20},
       {9, 3},
       [](const Tensors& t) {
         return Tensors{t[0].slice(1, 3, 10), t[1].slice(0, 2, 9)};
       }},
      {"one row", {1, 7}, {7, 9}, testing::identity_views},
      {"one column", {6, 7}, {7, 1}, testing::identity_views},
      {"K = 1", {6, 1}, {1, 4}, testing::identity_views},
      {"[1,K] from a transposed column",
       {7, 1},
       {7, 4},
       [](const Tensors& t) { return transpose_last(t, true, false); }},
      {"vector @ matrix", {7}, {7, 4}, testing::identity_views},
      {"matrix @ vector", {4, 7}, {7}, testing::identity_views},
      {"vector @ vector", {7}, {7}, testing::identity_views},
      {"vector @ batched", {4}, {2, 4, 3}, testing::identity_views},
      {"batched @ vector", {2, 3, 4}, {4}, testing::identity_views},
      {"[B,T,K] @ [K,N] (folded into one GEMM)", {3, 5, 8}, {8, 6}, testing::identity_views},
      {"[B,T,K] @ Wᵀ (folded, B transposed)",
       {3, 5, 8},
       {6, 8},
       [](const Tensors& t) { return transpose_last(t, false, true); }},
      {"[K,N] shared, A transposed per batch",
       {3, 8, 5},
       {8, 6},
       [](const Tensors& t) { return transpose_last(t, true, false); }},
      {"[M,K] @ [B,K,N] (A stride 0)", {5, 8}, {4, 8, 6}, testing::identity_views},
      {"batched, both transposed",
       {2, 3, 7, 5},
       {2, 3, 4, 7},
       [](const Tensors& t) { return transpose_last(t, true, true); }},
      {"[2,1,4,3] @ [3,3,2] (A's batch needs a copy)", {2, 1, 4, 3}, {3, 3, 2}, testing::identity_views},
      {"[2,3,4,5] @ [3,5,2]", {2, 3, 4, 5}, {3, 5, 2}, testing::identity_views},
      {"heads view [B,T,H,D] -> [B,H,T,D] @ its transpose",
       {2, 6, 3, 4},
       {2, 6, 3, 4},
       [](const Tensors& t) {
         return Tensors{t[0].transpose(1, 2), t[1].transpose(1, 2).transpose(-1, -2)};
       }},
      {"unit batch axes", {1, 3, 1, 4, 5}, {1, 1, 5, 2}, testing::identity_views},
      {"larger, odd sizes", {2, 129, 67}, {67, 95}, testing::identity_views},
  };
}

}  // namespace

TEST_CASE("GPU matmul equals the CPU for every layout and batch broadcast", "[cuda][gpu][matmul]") {
  AGF_REQUIRE_GPU();
  uint64_t seed = 700;
  for (const MatmulCase& c : matmul_cases()) {
    const Tensor a = testing::random_f64(c.a_shape, seed++), b = testing::random_f64(c.b_shape, seed++);
    compare_with_cpu(
        c.name, {a, b}, [](const Tensors& t) { return ops::matmul(t[0], t[1]); }, c.views, gemm_tolerance);
  }
}

TEST_CASE("GPU matmul of small integers is exact in every dtype and layout", "[cuda][gpu][matmul]") {
  AGF_REQUIRE_GPU();
  // Entries in [-2, 2] and K ≤ 20: every product and partial sum is an integer of magnitude ≤ 80,
  // exact in f16 and bf16 (integers up to 256) as in f32, so any misplaced element shows.
  uint64_t seed = 800;
  for (const MatmulCase& c : matmul_cases()) {
    bool small = true;
    for (int64_t extent : c.a_shape) small = small && extent <= 20;
    for (int64_t extent : c.b_shape) small = small && extent <= 20;
    if (!small) continue;
    const Tensor a = testing::random_integers(c.a_shape, seed++, -2, 2);
    const Tensor b = testing::random_integers(c.b_shape, seed++, -2, 2);
    compare_with_cpu(
        std::string("integers, ") + c.name, {a, b}, [](const Tensors& t) { return ops::matmul(t[0], t[1]); }, c.views,
        exact);
  }
  // A larger product, f32 only (K = 300, |entries| ≤ 3: sums ≤ 2700, exact in f32).
  const Tensor a = testing::random_integers({130, 300}, 900, -3, 3),
               b = testing::random_integers({300, 70}, 901, -3, 3);
  compare_with_cpu(
      "integers, [130,300] @ [300,70]", {a, b}, [](const Tensors& t) { return ops::matmul(t[0], t[1]); },
      [](const Tensors& t) {
        return Tensors{t[0], t[1].transpose(0, 1).contiguous().transpose(0, 1)};
      },
      exact, {DType::f32, DType::f64});
}

TEST_CASE("GPU matmul with empty sizes", "[cuda][gpu][matmul]") {
  AGF_REQUIRE_GPU();
  const Device gpu = Device::cuda();
  const Tensor k0 = ops::matmul(Tensor::ones({3, 0}, DType::f32, gpu), Tensor::ones({0, 4}, DType::f32, gpu));
  REQUIRE(k0.shape() == Shape{3, 4});
  CHECK(k0.to(Device::cpu()).to_double_vector() == std::vector<double>(12, 0.0));
  CHECK(ops::matmul(Tensor::ones({0, 3}, DType::f32, gpu), Tensor::ones({3, 4}, DType::f32, gpu)).shape() ==
        Shape{0, 4});
  CHECK(ops::matmul(Tensor::ones({2, 0, 3}, DType::f32, gpu), Tensor::ones({3, 4}, DType::f32, gpu)).shape() ==
        Shape{2, 0, 4});
  CHECK(ops::matmul(Tensor::ones({0, 2, 3}, DType::f16, gpu), Tensor::ones({3, 4}, DType::f16, gpu)).shape() ==
        Shape{0, 2, 4});
}

TEST_CASE("GPU matmul_backward equals the CPU's (broadcast batches summed, vectors)", "[cuda][gpu][matmul]") {
  AGF_REQUIRE_GPU();
  const std::vector<std::pair<Shape, Shape>> shapes{
      {{5, 7}, {7, 3}}, {{2, 3, 4, 5}, {3, 5, 2}}, {{4}, {2, 4, 3}}, {{3, 5, 8}, {8, 6}}, {{7}, {7}}, {{2, 6, 4}, {4}}};
  uint64_t seed = 1000;
  for (const auto& [a_shape, b_shape] : shapes) {
    const Tensor a = testing::random_f64(a_shape, seed++), b = testing::random_f64(b_shape, seed++);
    const Tensor g = testing::random_f64(ops::matmul(a, b).shape(), seed++);
    const std::string name = shape_string(a_shape) + " @ " + shape_string(b_shape);
    compare_with_cpu(
        "grad a, " + name, {g, a, b}, [](const Tensors& t) { return ops::matmul_backward(t[0], t[1], t[2]).first; },
        testing::identity_views, gemm_tolerance);
    compare_with_cpu(
        "grad b, " + name, {g, a, b}, [](const Tensors& t) { return ops::matmul_backward(t[0], t[1], t[2]).second; },
        testing::identity_views, gemm_tolerance);
  }
}

TEST_CASE("GPU matmul errors read as on the CPU", "[cuda][gpu][matmul]") {
  AGF_REQUIRE_GPU();
  const Device gpu = Device::cuda();
  const Tensor a = Tensor::zeros({5, 7}, DType::f32, gpu);
  CHECK_THROWS_WITH(ops::matmul(a, a), Catch::Contains("inner dimensions differ") && Catch::Contains("(7 vs 5)"));
  CHECK_THROWS_WITH(ops::matmul(a, Tensor::zeros({7, 3}, DType::f64, gpu)), Catch::Contains("dtype mismatch"));
  CHECK_THROWS_WITH(ops::matmul(a, Tensor::zeros({7, 3})), Catch::Contains("different devices"));
  CHECK_THROWS_WITH(ops::matmul(Tensor::zeros({2, 2}, DType::i64, gpu), Tensor::zeros({2, 2}, DType::i64, gpu)),
                    Catch::Contains("matmul") && Catch::Contains("i64"));
}
