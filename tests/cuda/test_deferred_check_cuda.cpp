// Deferred device checks (core/cuda/deferred_check.h): a bad id found on the GPU is raised at the host's
// next wait, only the first failure is reported, the record is clean again afterwards, and a long run of
// checks without a wait is read before it grows without bound.
#include <catch2/catch.hpp>

#include "core/cuda/runtime.h"
#include "ops/embedding.h"
#include "tests/cuda/nn_op_compare.h"

using namespace agf;

namespace {
// An embedding lookup on the GPU whose ids hold `bad` at position 2 (when bad >= 0 it is outside [0, 4)).
Tensor lookup(int64_t bad) {
  const Tensor table = Tensor::zeros({4, 2}, DType::f32, Device::cuda());
  return ops::embedding_forward(table, Tensor::from_vector(std::vector<int64_t>{0, 1, bad, 3}, {4}).to(Device::cuda()));
}
}  // namespace

TEST_CASE("deferred checks: the first failure is raised at the next wait, then the record is clean", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  lookup(7);
  lookup(9);  // a second failure before the wait: not reported, the first one is
  lookup(2);  // a good lookup after them changes nothing
  CHECK(testing::error_of([] { synchronize(Device::cuda()); }) == "embedding: id 7 at position 2 is outside [0, 4)");
  CHECK(testing::error_of([] { synchronize(Device::cuda()); }) == "no error");  // read and reset
  CHECK(testing::error_of([] { lookup(1).to(Device::cpu()); }) == "no error");
  // A copy to the host carries the verdict of the work queued before it.
  CHECK(testing::error_of([] { lookup(5).to(Device::cpu()); }) == "embedding: id 5 at position 2 is outside [0, 4)");
}

TEST_CASE("deferred checks: more than 1024 without a wait are read, so an error cannot wait for ever", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  synchronize(Device::cuda());
  lookup(6);
  std::string error = "no error";
  int lookups = 1;
  for (; lookups < 1100 && error == "no error"; ++lookups) error = testing::error_of([] { lookup(1); });
  CHECK(error == "embedding: id 6 at position 2 is outside [0, 4)");
  CHECK(lookups == 1025);  // raised when the 1025th check is registered, before any synchronize()
  CHECK(testing::error_of([] { synchronize(Device::cuda()); }) == "no error");
}
