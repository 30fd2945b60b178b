// matmul_backward with 1-D operands (NumPy's promotion), against the formulas written out.
#include <catch2/catch.hpp>

#include "core/random.h"
#include "ops/matmul.h"

using namespace agf;

TEST_CASE("matmul_backward of vector products: [K]@[K], [K]@[K,N], [M,K]@[K]", "[ops][matmul]") {
  Generator generator(5);
  const Tensor u = uniform({4}, generator, -1, 1, DType::f64), v = uniform({4}, generator, -1, 1, DType::f64);
  const Tensor m = uniform({3, 4}, generator, -1, 1, DType::f64);
  const std::vector<double> uv = u.to_double_vector(), vv = v.to_double_vector(), mv = m.to_double_vector();
  // y = u·v (rank 0), g = 2: du = 2v, dv = 2u
  const auto [du, dv] = ops::matmul_backward(Tensor::full({}, 2.0, DType::f64), u, v);
  REQUIRE(du.shape() == Shape{4});
  REQUIRE(dv.shape() == Shape{4});
  for (int i = 0; i < 4; ++i) {
    CHECK(du.to_double_vector()[i] == Approx(2 * vv[i]));
    CHECK(dv.to_double_vector()[i] == Approx(2 * uv[i]));
  }
  // y = M u [3], g = (1, 2, 3): dM[i, j] = g_i u_j, du_j = Σ_i g_i M[i, j]
  const Tensor g = Tensor::from_vector(std::vector<double>{1, 2, 3}, {3}, DType::f64);
  const auto [dm, du2] = ops::matmul_backward(g, m, u);
  REQUIRE(dm.shape() == Shape{3, 4});
  REQUIRE(du2.shape() == Shape{4});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(dm.to_double_vector()[i * 4 + j] == Approx((i + 1) * uv[j]));
  for (int j = 0; j < 4; ++j) CHECK(du2.to_double_vector()[j] == Approx(1 * mv[j] + 2 * mv[4 + j] + 3 * mv[8 + j]));
  // y = uᵀ Mᵀ [3] (u [4] @ Mᵀ [4, 3]): du_j = Σ_i g_i M[i, j], d(Mᵀ)[j, i] = u_j g_i
  const auto [du3, dmt] = ops::matmul_backward(g, u, m.transpose(0, 1));
  REQUIRE(dmt.shape() == Shape{4, 3});
  for (int j = 0; j < 4; ++j) CHECK(du3.to_double_vector()[j] == Approx(du2.to_double_vector()[j]));
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) CHECK(dmt.to_double_vector()[j * 3 + i] == Approx(uv[j] * (i + 1)));
}
