// The user's own tests of smooth_max, with agf's public gradcheck (autograd/gradcheck.h): the backward
// against central differences in f64, and a deliberately wrong backward that gradcheck must reject.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "core/random.h"
#include "smooth_max.h"

namespace {

agf::Tensor random_f64(const agf::Shape& shape, uint64_t seed) {
  agf::Generator generator(seed);
  return agf::uniform(shape, generator, -3.0, 3.0, agf::DType::f64);
}

// The bug to catch: b's gradient computed with a's formula, σ(a - b) instead of 1 - σ(a - b).
agf::Variable smooth_max_with_wrong_backward(const agf::Variable& a, const agf::Variable& b) {
  return agf::make_result(custom_op::smooth_max_forward(a.data(), b.data()), "smooth_max_wrong", {a, b},
                          [a_data = a.data(), b_data = b.data()](const agf::Tensor& grad_output) {
                            auto [grad_a, grad_b] = custom_op::smooth_max_backward(grad_output, a_data, b_data);
                            return std::vector<agf::Tensor>{grad_a, grad_a};
                          });
}

}  // namespace

TEST_CASE("smooth_max is log(exp(a) + exp(b)), without overflow") {
  const agf::Tensor a = agf::Tensor::from_vector(std::vector<double>{0.0, 1.0, -2.0, 1000.0}, {4}, agf::DType::f64);
  const agf::Tensor b = agf::Tensor::from_vector(std::vector<double>{0.0, 3.0, -2.5, 0.0}, {4}, agf::DType::f64);
  const std::vector<double> y = custom_op::smooth_max_forward(a, b).to_double_vector();
  CHECK(y[0] == Approx(std::log(2.0)));
  CHECK(y[1] == Approx(std::log(std::exp(1.0) + std::exp(3.0))));
  CHECK(y[2] == Approx(std::log(std::exp(-2.0) + std::exp(-2.5))));
  CHECK(y[3] == 1000.0);  // exp(1000) overflows; the stable form does not
}

TEST_CASE("smooth_max's backward passes gradcheck") {
  const agf::CheckedFunction f = [](const std::vector<agf::Variable>& x) { return custom_op::smooth_max(x[0], x[1]); };
  // A [3, 4] input and a transposed [4, 3] view: gradcheck perturbs each element through its strides.
  const agf::GradcheckResult result = agf::gradcheck(f, {random_f64({3, 4}, 1), random_f64({4, 3}, 2).transpose(0, 1)});
  INFO("worst relative error " << result.worst);
  CHECK(result.passed);
}

TEST_CASE("gradcheck rejects a wrong backward, and names the input") {
  const agf::CheckedFunction f = [](const std::vector<agf::Variable>& x) {
    return smooth_max_with_wrong_backward(x[0], x[1]);
  };
  const agf::GradcheckResult result = agf::gradcheck(f, {random_f64({3, 4}, 1), random_f64({3, 4}, 2)});
  CHECK_FALSE(result.passed);
  REQUIRE(result.relative_error.size() == 2);
  CHECK(result.relative_error[0] < 1e-6);  // a's gradient is right
  CHECK(result.relative_error[1] > 0.1);   // b's is not
}

TEST_CASE("smooth_max trains: the gradient of a sum flows to both inputs") {
  agf::Variable a(agf::Tensor::from_vector(std::vector<double>{0.0, 2.0}, {2}), /*requires_grad=*/true);
  agf::Variable b(agf::Tensor::from_vector(std::vector<double>{0.0, 0.0}, {2}), /*requires_grad=*/true);
  agf::sum(custom_op::smooth_max(a, b)).backward();
  const std::vector<double> grad_a = a.grad().to_double_vector(), grad_b = b.grad().to_double_vector();
  CHECK(grad_a[0] == Approx(0.5));
  CHECK(grad_b[0] == Approx(0.5));
  CHECK(grad_a[1] + grad_b[1] == Approx(1.0));  // the two shares of each element add up to 1
}
