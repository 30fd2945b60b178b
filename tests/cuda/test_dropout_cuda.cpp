// Dropout on a GPU draws the CPU's mask bit for bit: same Philox stream, same element → counter
// convention, same keep test (ops/dropout_mask.h). f32/f64 results are identical to the CPU's; f16/bf16
// are the CPU's f32 result rounded once.
#include <catch2/catch.hpp>

#include "ops/dropout.h"
#include "tests/cuda/nn_op_compare.h"

using namespace agf;
using testing::random_f64;

TEST_CASE("dropout on the GPU keeps exactly the CPU's elements", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  struct Stream {
    uint64_t seed, offset;
  };
  // Seeds and offsets beyond 32 bits exercise both key words and both counter words.
  const std::vector<Stream> streams{{0, 0}, {9, 3}, {0x123456789abcdefULL, (1ULL << 32) + 5}};
  for (int64_t count : {1, 3, 4, 5, 1001, 65536 + 7}) {
    const Tensor x = random_f64({count}, 80 + count);
    for (double p : {0.0, 0.1, 0.5, 0.9}) {
      for (const Stream& stream : streams) {
        for (DType dtype : {DType::f64, DType::f32}) {
          const Tensor input = x.to(dtype);
          const Tensor cpu = ops::dropout_forward(input, p, stream.seed, stream.offset);
          testing::require_close(ops::dropout_forward(input.to(Device::cuda()), p, stream.seed, stream.offset), cpu, 0,
                                 0, "dropout forward");
          testing::require_close(ops::dropout_backward(input.to(Device::cuda()), p, stream.seed, stream.offset),
                                 ops::dropout_backward(input, p, stream.seed, stream.offset), 0, 0, "dropout backward");
        }
        for (DType dtype : {DType::f16, DType::bf16}) {
          const Tensor input = x.to(dtype);
          const Tensor cpu = ops::dropout_forward(input.to(DType::f32), p, stream.seed, stream.offset).to(dtype);
          testing::require_close(ops::dropout_forward(input.to(Device::cuda()), p, stream.seed, stream.offset), cpu, 0,
                                 0, "dropout forward, half type");
        }
      }
    }
  }
}

TEST_CASE("GPU dropout of a strided tensor masks it in row-major order, as the CPU", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const Tensor x = random_f64({33, 31}, 4).to(DType::f32);
  const Tensor view_cpu = x.transpose(0, 1);
  const Tensor view_gpu = x.to(Device::cuda()).transpose(0, 1);
  testing::require_close(ops::dropout_forward(view_gpu, 0.3, 77, 11), ops::dropout_forward(view_cpu, 0.3, 77, 11), 0, 0,
                         "strided dropout");
  CHECK_THROWS_WITH(ops::dropout_forward(view_gpu, 1.0, 0, 0), Catch::Contains("probability must be in [0, 1)"));
}
