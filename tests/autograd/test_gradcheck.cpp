#include <catch2/catch.hpp>

#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "core/random.h"
#include "ops/elementwise.h"

TEST_CASE("every registered op passes gradcheck in f64", "[autograd][gradcheck]") {
  const auto& checks = agf::op_checks();
  REQUIRE(checks.size() >= 30);
  for (const agf::OpCheck& check : checks) {
    DYNAMIC_SECTION(check.name) {
      const agf::GradcheckResult result = check.run();
      INFO(check.name << ": " << check.description << " -> max relative error " << result.worst);
      CHECK(result.passed);
      CHECK(result.worst < 1e-6);
    }
  }
}

TEST_CASE("gradcheck catches a wrong backward", "[autograd][gradcheck]") {
  // exp with the backward of 2·x: a bug gradcheck must report.
  const agf::CheckedFunction wrong = [](const std::vector<agf::Variable>& x) {
    return agf::make_result(agf::ops::exp(x[0].data()), "wrong_exp", {x[0]}, [](const agf::Tensor& g) {
      return std::vector<agf::Tensor>{agf::ops::mul_scalar(g, 2.0)};
    });
  };
  agf::Generator generator(3);
  const agf::GradcheckResult result = agf::gradcheck(wrong, {agf::uniform({4}, generator, -1, 1, agf::DType::f64)});
  CHECK_FALSE(result.passed);
  CHECK(result.worst > 0.1);
}

TEST_CASE("gradcheck refuses f32 inputs", "[autograd][gradcheck]") {
  const agf::CheckedFunction identity = [](const std::vector<agf::Variable>& x) { return x[0] * 1.0; };
  CHECK_THROWS_WITH(agf::gradcheck(identity, {agf::Tensor::ones({2})}), Catch::Contains("must be f64"));
}
