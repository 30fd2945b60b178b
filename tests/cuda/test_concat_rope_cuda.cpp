// concat (device-independent: allocation on the parts' device and strided copies) and RoPE on a GPU,
// against the CPU, forward and backward, every dtype.
#include <catch2/catch.hpp>

#include "ops/concat.h"
#include "ops/rope.h"
#include "tests/cuda/op_compare.h"

using namespace agf;
using testing::compare_with_cpu;
using testing::Tensors;

TEST_CASE("GPU concat and its backward equal the CPU's", "[cuda][gpu][concat]") {
  AGF_REQUIRE_GPU();
  const Tensor a = testing::random_f64({2, 2, 5}, 1), b = testing::random_f64({2, 3, 5}, 2),
               c = testing::random_f64({2, 6, 5}, 3);
  auto exact = [](DType) { return testing::Tolerance{0, 0}; };
  // A sliced part and a transposed part: copies from strided views.
  auto views = [](const Tensors& t) { return Tensors{t[0], t[1], t[2].slice(1, 1, 6, 2)}; };
  compare_with_cpu(
      "concat axis 1", {a, b, c}, [](const Tensors& t) { return ops::concat(t, 1); }, views, exact);
  compare_with_cpu(
      "concat axis -1", {a, a},
      [](const Tensors& t) {
        return ops::concat({t[0], t[1].transpose(0, 1).contiguous().transpose(0, 1)}, -1);
      },
      testing::identity_views, exact);
  compare_with_cpu(
      "concat axis 0", {b, b}, [](const Tensors& t) { return ops::concat(t, 0); }, testing::identity_views, exact);
  const Tensor g = testing::random_f64({2, 7, 5}, 4);
  for (int part = 0; part < 3; ++part) {
    compare_with_cpu(
        "concat_backward part " + std::to_string(part), {g},
        [part](const Tensors& t) {
          return ops::concat_backward(t[0], {{2, 2, 5}, {2, 3, 5}, {2, 2, 5}}, 1)[part].contiguous();
        },
        testing::identity_views, exact);
  }
  const Tensor on_gpu = Tensor::zeros({2, 2}, DType::f32, Device::cuda());
  CHECK_THROWS_WITH(ops::concat({on_gpu, Tensor::zeros({2, 2})}, 0), Catch::Contains("different devices"));
  CHECK(ops::concat({on_gpu, on_gpu}, 0).device() == Device::cuda());
}

TEST_CASE("GPU RoPE forward and backward equal the CPU's", "[cuda][gpu][rope]") {
  AGF_REQUIRE_GPU();
  // Angles up to 63 rad: the f32 rotation uses cos/sin computed in double and rounded, as on the CPU.
  const Tensor x = testing::random_f64({2, 3, 64, 16}, 10, -2, 2);
  compare_with_cpu("rope", {x}, [](const Tensors& t) { return ops::rope_forward(t[0]); });
  compare_with_cpu("rope_backward", {x}, [](const Tensors& t) { return ops::rope_backward(t[0]); });
  // A transposed input [B, T, H, dk] -> [B, H, T, dk] (made contiguous first on both devices).
  compare_with_cpu("rope of a transposed view", {testing::random_f64({2, 33, 4, 8}, 11)},
                   [](const Tensors& t) { return ops::rope_forward(t[0].transpose(1, 2)); });
  // The backward undoes the forward.
  const Tensor gpu = x.to(DType::f64).to(Device::cuda());
  testing::require_close(ops::rope_backward(ops::rope_forward(gpu)), x, 1e-12, 1e-12, "rope round trip");
  CHECK_THROWS_WITH(ops::rope_forward(Tensor::zeros({1, 1, 2, 3}, DType::f32, Device::cuda())),
                    Catch::Contains("must be even"));
  CHECK_THROWS_WITH(ops::rope_forward(Tensor::zeros({2, 3}, DType::f32, Device::cuda())),
                    Catch::Contains("expects [B, H, T, dk]"));
}
