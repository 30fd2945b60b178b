// Tensors on a GPU: host ↔ device round trips, strided copies and casts, fill, and the errors when
// there is no GPU or devices are mixed.
#include <catch2/catch.hpp>

#include "core/random.h"
#include "ops/elementwise.h"
#include "tests/cuda/gpu_test.h"

using namespace agf;

TEST_CASE("to(cuda) without a usable GPU names the reason", "[cuda]") {
  if (cuda_device_count() > 0) AGF_SKIP("a GPU is present; this checks the error when there is none");
  const Tensor x = Tensor::ones({2, 3});
  REQUIRE_THROWS_WITH(x.to(Device::cuda()), Catch::Contains("cuda:0") && Catch::Contains(cuda_unavailable_reason()));
}

TEST_CASE("host -> GPU -> host round trip keeps every value and dtype", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (DType dtype : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64}) {
    const Tensor x = Tensor::arange(1000, DType::f64).reshape({10, 100}).to(dtype);
    const Tensor gpu = x.to(Device::cuda());
    REQUIRE(gpu.device() == Device::cuda());
    REQUIRE(gpu.dtype() == dtype);
    REQUIRE(gpu.to(Device::cpu()).to_double_vector() == x.to_double_vector());
  }
}

TEST_CASE("GPU contiguous, casts, copy_from with broadcast, fill", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  Generator generator(7);
  Tensor x = Tensor::empty({4, 5, 6}, DType::f64);
  fill_normal(x, generator);
  const Tensor gpu = x.to(Device::cuda());
  // A transposed slice, made contiguous on the GPU, equals the same on the CPU.
  const Tensor view_cpu = x.permute({2, 0, 1}).slice(1, 1, 4);
  const Tensor view_gpu = gpu.permute({2, 0, 1}).slice(1, 1, 4);
  testing::require_close(view_gpu.contiguous(), view_cpu.contiguous(), 0, 0, "contiguous");
  // Casts round the same way on both devices.
  for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    testing::require_close(gpu.to(dtype), x.to(dtype), 0, 0, "cast");
  }
  // f64 -> f16/bf16 rounds through f32 as on the CPU, also just above a tie, where rounding once differs.
  const Tensor near_ties = Tensor::from_vector(
      std::vector<double>{1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40, -(1 + 0x1p-11 + 0x1p-40)}, {3});
  for (DType dtype : {DType::f16, DType::bf16}) {
    testing::require_close(near_ties.to(Device::cuda()).to(dtype), near_ties.to(dtype), 0, 0, "cast near a tie");
    Tensor filled = Tensor::empty({2}, dtype, Device::cuda());
    filled.fill(1 + 0x1p-11 + 0x1p-40);
    Tensor expected = Tensor::empty({2}, dtype);
    expected.fill(1 + 0x1p-11 + 0x1p-40);
    testing::require_close(filled, expected, 0, 0, "fill near a tie");
  }
  // copy_from broadcasts a row over a matrix, converting the dtype.
  Tensor target = Tensor::zeros({3, 4}, DType::f32, Device::cuda());
  target.copy_from(Tensor::from_vector(std::vector<double>{1, 2, 3, 4}, {4}, DType::f64));
  REQUIRE(target.to(Device::cpu()).to_double_vector() == std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4});
  // fill on a strided view touches only the view.
  Tensor matrix = Tensor::zeros({3, 4}, DType::bf16, Device::cuda());
  matrix.slice(1, 1, 3).fill(2.5);
  REQUIRE(matrix.to(Device::cpu()).to_double_vector() ==
          std::vector<double>{0, 2.5, 2.5, 0, 0, 2.5, 2.5, 0, 0, 2.5, 2.5, 0});
}

TEST_CASE("an op on tensors from two devices is refused, naming both", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const Tensor a = Tensor::ones({2, 2});
  const Tensor b = Tensor::ones({2, 2}).to(Device::cuda());
  REQUIRE_THROWS_WITH(ops::add(a, b),
                      Catch::Contains("different devices") && Catch::Contains("cuda:0") && Catch::Contains("on cpu"));
}
