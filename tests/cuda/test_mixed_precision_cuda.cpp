// Mixed precision on the GPU: the gradients of bf16 compute copies are summed in f32 (as PyTorch's AMP
// keeps .grad in f32), so that a parameter used several times keeps every contribution.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/functions.h"
#include "tests/cuda/gpu_test.h"
#include "train/mixed_precision.h"

using namespace agf;

TEST_CASE("GPU bf16 parameters sum their gradient contributions in f32", "[gpu][cuda][mixed-precision]") {
  AGF_REQUIRE_GPU();
  std::vector<std::pair<std::string, Variable>> model{
      {"w", Variable(Tensor::full({4}, 0.5, DType::f32).to(Device::cuda()), true)}};
  train::MixedPrecisionOptimizer optimizer(model,
                                           train::mixed_precision_options(train::Precision::bf16, Device::cuda()));
  const Variable& w = model[0].second;
  REQUIRE(w.dtype() == DType::bf16);
  // Three uses with contributions 1, 2^-9, 2^-9: bf16 (8 significant bits) rounds 1 + 2^-9 back to 1, so
  // summed in bf16 the gradient would be 1; summed in f32 it is 1 + 2^-8.
  const double tiny = std::ldexp(1.0, -9);
  (sum(w * 1.0) + sum(w * tiny) + sum(w * tiny)).backward();
  REQUIRE(w.grad().dtype() == DType::f32);
  CHECK(w.grad().to(Device::cpu()).to_double_vector() == std::vector<double>(4, 1 + 2 * tiny));
  // The optimizer sees the f32 sums: ‖g‖₂ = √4 · (1 + 2^-8).
  const train::UpdateOutcome outcome = optimizer.step(1e-3, 0);
  CHECK(outcome.applied);
  CHECK(outcome.grad_norm == Approx(2 * (1 + 2 * tiny)).epsilon(1e-12));
}
