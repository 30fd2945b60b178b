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

TEST_CASE("agf's own op checks are in the registry, whatever the linker kept", "[autograd][gradcheck]") {
  // This program links the static libagf.a, from which a linker takes only the objects something refers
  // to: checks that registered themselves from static objects in a file of their own would be missing.
  for (const char* name : {"add", "matmul_batched", "layer_norm", "cross_entropy", "cast",
                           "attention:agf-m+pcmv+causal", "attention:t5+tq3tk5", "attention:edge:T=1"}) {
    INFO(name);
    CHECK(agf::find_op_check(name) != nullptr);
  }
  CHECK(agf::find_op_check("no such op") == nullptr);
}

TEST_CASE("a program adds its own op checks after agf's", "[autograd][gradcheck]") {
  const std::size_t builtin = agf::op_checks().size();
  agf::register_op_check({"test:square", "x², a check added by this test", [] {
                            agf::Generator generator(5);
                            return agf::gradcheck([](const std::vector<agf::Variable>& x) { return x[0] * x[0]; },
                                                  {agf::uniform({3}, generator, -1, 1, agf::DType::f64)});
                          }});
  REQUIRE(agf::op_checks().size() == builtin + 1);
  const agf::OpCheck* added = agf::find_op_check("test:square");
  REQUIRE(added == &agf::op_checks().back());
  CHECK(added->run().passed);
  agf::op_checks().pop_back();  // leave the registry as the other tests expect it
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
