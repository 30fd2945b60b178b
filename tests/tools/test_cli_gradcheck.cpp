#include <catch2/catch.hpp>

#include "core/device.h"
#include "tests/skip.h"
#include "tests/tools/cli_runner.h"

TEST_CASE("agf gradcheck --list names every op, --op runs one", "[cli]") {
  const CommandResult list = run_agf("gradcheck --list");
  CHECK(list.status == 0);
  for (const char* op : {"matmul_transposed", "layer_norm", "cross_entropy", "dropout", "gelu_erf", "concat"}) {
    CHECK_THAT(list.output, Catch::Contains(op));
  }
  const CommandResult one = run_agf("gradcheck --op softmax");
  CHECK(one.status == 0);
  CHECK_THAT(one.output, Catch::Contains("softmax") && Catch::Contains("ok") && Catch::Contains("1 checked, 0 failed"));
}

TEST_CASE("agf reports bad flags and unknown ops with a non-zero exit", "[cli][errors]") {
  const CommandResult unknown = run_agf("gradcheck --op no_such_op");
  CHECK(unknown.status == 1);
  CHECK_THAT(unknown.output, Catch::Contains("no op named 'no_such_op'"));
  const CommandResult bad_flag = run_agf("gradcheck --frobnicate");
  CHECK(bad_flag.status == 2);
  CHECK_THAT(bad_flag.output, Catch::Contains("frobnicate"));
  const CommandResult nothing = run_agf("");
  CHECK(nothing.status == 2);
  const CommandResult help = run_agf("--help");
  CHECK(help.status == 0);
  CHECK_THAT(help.output, Catch::Contains("gradcheck") && Catch::Contains("bench"));
}

TEST_CASE("agf gradcheck --device cuda without a GPU says why", "[cli][errors][cuda]") {
  if (agf::cuda_device_count() > 0) AGF_SKIP("a GPU is present; this checks the error when there is none");
  const CommandResult gpu = run_agf("gradcheck --op softmax --device cuda");
  CHECK(gpu.status == 1);
  CHECK_THAT(gpu.output, Catch::Contains("--device cuda") && Catch::Contains(agf::cuda_unavailable_reason()));
  const CommandResult bad = run_agf("gradcheck --op softmax --device tpu");
  CHECK(bad.status == 1);
  CHECK_THAT(bad.output, Catch::Contains("--device: 'tpu' is not a device"));
}
