// `agf bench train`: the flags that gpu-check.sh relies on, and their errors without a GPU.
#include <catch2/catch.hpp>

#include "core/device.h"
#include "tests/skip.h"
#include "tests/tools/cli_runner.h"

TEST_CASE("agf bench train times steps and prints tokens/s and TFLOP/s", "[cli][bench]") {
  const CommandResult run = run_agf("bench train --preset tiny --batch 4 --length 6 --vocab 50 --steps 1");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains("target tok/s") && Catch::Contains("TFLOP/s") && Catch::Contains("MFU@790") &&
                             Catch::Contains("agf-m"));
}

TEST_CASE("agf bench train refuses half precision on the CPU and a missing GPU", "[cli][bench][errors]") {
  const CommandResult half = run_agf("bench train --preset tiny --precision bf16 --steps 1");
  CHECK(half.status == 1);
  CHECK_THAT(half.output, Catch::Contains("--precision bf16 needs --device cuda"));
  if (agf::cuda_device_count() > 0) AGF_SKIP("a GPU is present; the missing-GPU error cannot be seen here");
  const CommandResult gpu = run_agf("bench train --preset tiny --device cuda --steps 1");
  CHECK(gpu.status == 1);
  CHECK_THAT(gpu.output, Catch::Contains("--device cuda") && Catch::Contains(agf::cuda_unavailable_reason()));
}
