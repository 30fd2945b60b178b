// Layer norm on a GPU against the CPU: forward (y, mean, rstd) and backward (x, weight, bias), features
// from 1 to 50,000, enough rows for many chunks of the weight/bias reduction, every floating dtype.
#include <catch2/catch.hpp>

#include "ops/layer_norm.h"
#include "tests/cuda/nn_op_compare.h"

using namespace agf;
using testing::max_abs;
using testing::random_f64;
using testing::require_near;
using testing::rounded;

namespace {
struct NormCase {
  int64_t rows, features;
};
const std::vector<NormCase> kNormCases{{5, 1}, {37, 31}, {300, 33}, {9, 1000}, {3, 50000}, {5000, 48}};

std::string label(const char* what, DType dtype, const NormCase& shape) {
  return std::string(what) + " " + std::string(dtype_name(dtype)) + " [" + std::to_string(shape.rows) + ", " +
         std::to_string(shape.features) + "]";
}

Tensor gpu(const Tensor& x, DType dtype) { return x.to(dtype).to(Device::cuda()); }

// mean and rstd are kept in the compute type: f32 for f16/bf16 (as PyTorch), the dtype itself otherwise.
DType statistics_dtype(DType dtype) { return dtype == DType::f64 ? DType::f64 : DType::f32; }
}  // namespace

TEST_CASE("layer_norm forward on the GPU equals the CPU", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const double eps = 1e-5;
  for (const NormCase& shape : kNormCases) {
    const Tensor x = random_f64({shape.rows, shape.features}, 3 + shape.features, 2.0);
    const Tensor w = random_f64({shape.features}, 4 + shape.features);
    const Tensor b = random_f64({shape.features}, 5 + shape.features);
    for (DType dtype : testing::kFloatingDtypes) {
      const ops::LayerNormResult reference = ops::layer_norm_forward(rounded(x, dtype), rounded(w, dtype),
                                                                     rounded(b, dtype), eps);
      const ops::LayerNormResult result = ops::layer_norm_forward(gpu(x, dtype), gpu(w, dtype), gpu(b, dtype), eps);
      REQUIRE(result.y.dtype() == dtype);
      REQUIRE(result.mean.device() == Device::cuda());
      REQUIRE(result.mean.dtype() == statistics_dtype(dtype));
      REQUIRE(result.rstd.dtype() == statistics_dtype(dtype));
      const double tol = testing::tolerance(dtype);
      require_near(result.y, reference.y, tol, label("y", dtype, shape));
      require_near(result.mean, reference.mean, tol, label("mean", dtype, shape));
      require_near(result.rstd, reference.rstd, tol, label("rstd", dtype, shape));
    }
  }
}

TEST_CASE("layer_norm backward on the GPU equals the CPU, weight/bias grads deterministic", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const double eps = 1e-5;
  for (const NormCase& shape : kNormCases) {
    const Tensor x = random_f64({shape.rows, shape.features}, 13 + shape.features, 2.0);
    const Tensor w = random_f64({shape.features}, 14 + shape.features);
    const Tensor b = random_f64({shape.features}, 15 + shape.features);
    const Tensor g = random_f64({shape.rows, shape.features}, 16 + shape.features);
    for (DType dtype : testing::kFloatingDtypes) {
      // Both sides use the same saved statistics: the f64 forward's, rounded to the statistics' dtype.
      const ops::LayerNormResult forward = ops::layer_norm_forward(rounded(x, dtype), rounded(w, dtype), b, eps);
      const DType stats = statistics_dtype(dtype);
      const Tensor mean = rounded(forward.mean, stats), rstd = rounded(forward.rstd, stats);
      const ops::LayerNormGradients reference = ops::layer_norm_backward(rounded(g, dtype), rounded(x, dtype),
                                                                         rounded(w, dtype), mean, rstd);
      const ops::LayerNormGradients result = ops::layer_norm_backward(gpu(g, dtype), gpu(x, dtype), gpu(w, dtype),
                                                                      gpu(mean, stats), gpu(rstd, stats));
      // Column sums over thousands of rows carry more f32 rounding than a row.
      const double tol = testing::tolerance(dtype), sum_tol = dtype == DType::f32 ? 1e-4 : tol;
      // grad x = rstd·(g·w - mean(g·w) - x̂·mean(g·w·x̂)) cancels to 0 for one feature. The kernel computes
      // in `stats` (f32 for f16/bf16), where a contracted fma leaves rstd·ulp(g·w): judged against the terms'
      // size rstd·|g|·|w| at that type's tolerance, not against the reference's 0.
      const double terms = max_abs(rstd) * max_abs(rounded(g, dtype)) * max_abs(rounded(w, dtype));
      const double least_scale = shape.features == 1 ? terms * testing::tolerance(stats) / tol : 0;
      require_near(result.x, reference.x, tol, label("grad x", dtype, shape), least_scale);
      require_near(result.weight, reference.weight, sum_tol, label("grad weight", dtype, shape));
      require_near(result.bias, reference.bias, sum_tol, label("grad bias", dtype, shape));
      // The same inputs give the same bits (no atomics in the column reduction).
      const ops::LayerNormGradients again = ops::layer_norm_backward(gpu(g, dtype), gpu(x, dtype), gpu(w, dtype),
                                                                     gpu(mean, stats), gpu(rstd, stats));
      CHECK(again.weight.to(Device::cpu()).to_double_vector() == result.weight.to(Device::cpu()).to_double_vector());
      CHECK(again.bias.to(Device::cpu()).to_double_vector() == result.bias.to(Device::cpu()).to_double_vector());
    }
  }
}

TEST_CASE("GPU layer_norm on 3-D and strided input, and its errors", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const Tensor x = random_f64({2, 3, 40}, 1);
  const Tensor w = random_f64({40}, 2), b = random_f64({40}, 3);
  const Tensor view = random_f64({40, 6}, 4).transpose(0, 1);  // [6, 40], not contiguous
  for (const Tensor& input : {x, view}) {
    const ops::LayerNormResult reference = ops::layer_norm_forward(input, w, b, 1e-6);
    const ops::LayerNormResult result = ops::layer_norm_forward(input.to(Device::cuda()), w.to(Device::cuda()),
                                                                b.to(Device::cuda()), 1e-6);
    require_near(result.y, reference.y, 1e-12, "y");
    CHECK(result.mean.shape() == reference.mean.shape());
  }
  const Tensor bad_weight = Tensor::ones({39}, DType::f64, Device::cuda());
  CHECK_THROWS_WITH(ops::layer_norm_forward(x.to(Device::cuda()), bad_weight, b.to(Device::cuda()), 1e-5),
                    Catch::Contains("weight and bias must be [40]"));
  CHECK_THROWS_WITH(ops::layer_norm_forward(x.to(Device::cuda()), w, b, 1e-5), Catch::Contains("different devices"));
}
