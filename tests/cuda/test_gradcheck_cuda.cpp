// Every registered gradient check, evaluated on the GPU in f64: proves each CUDA kernel's backward
// against central differences, exactly as the CPU run does.
#include <catch2/catch.hpp>

#include "autograd/gradcheck.h"
#include "tests/cuda/gpu_test.h"

TEST_CASE("every registered op passes gradcheck in f64 on the GPU", "[cuda][gpu][gradcheck]") {
  AGF_REQUIRE_GPU();
  const agf::GradcheckDeviceScope on_gpu(agf::Device::cuda());
  for (const agf::OpCheck& check : agf::op_checks()) {
    DYNAMIC_SECTION(check.name) {
      agf::GradcheckResult result;
      REQUIRE_NOTHROW(result = check.run());
      INFO(check.name << ": " << check.description << " -> max relative error " << result.worst);
      CHECK(result.passed);
    }
  }
}

TEST_CASE("a gradcheck device scope restores the previous device", "[gradcheck]") {
  REQUIRE(agf::GradcheckDeviceScope::current() == agf::Device::cpu());
  {
    const agf::GradcheckDeviceScope scope(agf::Device::cuda(1));
    CHECK(agf::GradcheckDeviceScope::current() == agf::Device::cuda(1));
  }
  CHECK(agf::GradcheckDeviceScope::current() == agf::Device::cpu());
}

TEST_CASE("devices parse from cpu, cuda and cuda:N, and nothing else", "[core]") {
  CHECK(agf::parse_device("cpu") == agf::Device::cpu());
  CHECK(agf::parse_device("cuda") == agf::Device::cuda(0));
  CHECK(agf::parse_device("cuda:3") == agf::Device::cuda(3));
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:1x", "CPU", ""}) {
    CHECK_THROWS_WITH(agf::parse_device(bad), Catch::Contains("is not a device"));
  }
}
