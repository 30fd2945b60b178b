// The optimizer on GPU tensors: Adam's update and gradient clipping give the CPU's numbers (both update
// in f64 through train/adam_update.h; the GPU's norm is a per-tensor reduction read back once).
#include <catch2/catch.hpp>

#include "autograd/variable.h"
#include "tests/cuda/nn_op_compare.h"
#include "train/adam.h"

using namespace agf;
using testing::random_f64;

namespace {
const std::vector<Shape> kShapes{{1}, {33}, {1000, 7}, {3, 5, 2}};

// The same parameters on the CPU and on the GPU.
struct Twins {
  std::vector<std::pair<std::string, Variable>> cpu, gpu;
};

Twins make_parameters(DType dtype, uint64_t seed) {
  Twins twins;
  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    const Tensor value = random_f64(kShapes[k], seed + k).to(dtype);
    const std::string name = fmt::format("p{}", k);
    twins.cpu.emplace_back(name, Variable(value.clone(), true));
    twins.gpu.emplace_back(name, Variable(value.to(Device::cuda()), true));
  }
  return twins;
}

void set_gradients(const Twins& twins, DType dtype, uint64_t seed, double scale) {
  for (std::size_t k = 0; k < twins.cpu.size(); ++k) {
    const Tensor grad = random_f64(kShapes[k], seed + 100 + k, scale).to(dtype);
    twins.cpu[k].second.set_grad(grad);
    twins.gpu[k].second.set_grad(grad.to(Device::cuda()));
  }
}

std::vector<Variable> variables(const std::vector<std::pair<std::string, Variable>>& named) {
  std::vector<Variable> result;
  for (const auto& [name, variable] : named) result.push_back(variable);
  return result;
}
}  // namespace

TEST_CASE("Adam::step on GPU parameters equals the CPU", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (DType dtype : {DType::f32, DType::f64}) {
    const double tol = dtype == DType::f32 ? 1e-6 : 1e-12;
    Twins twins = make_parameters(dtype, 5);
    train::Adam cpu_adam(twins.cpu), gpu_adam(twins.gpu);
    for (int step = 1; step <= 4; ++step) {
      set_gradients(twins, dtype, 10 * step, 0.1 * step);
      if (step == 3) {  // a parameter without a gradient is left alone on both devices
        twins.cpu[1].second.zero_grad();
        twins.gpu[1].second.zero_grad();
      }
      cpu_adam.step(1e-3 * step);
      gpu_adam.step(1e-3 * step);
    }
    for (std::size_t k = 0; k < twins.cpu.size(); ++k) {
      REQUIRE(twins.gpu[k].second.data().device() == Device::cuda());
      testing::require_close(twins.gpu[k].second.data(), twins.cpu[k].second.data(), tol, tol * 1e-3, "parameter");
    }
    const auto cpu_state = cpu_adam.state(), gpu_state = gpu_adam.state();
    REQUIRE(gpu_state.size() == cpu_state.size());
    for (std::size_t k = 0; k < cpu_state.size(); ++k) {
      REQUIRE(gpu_state[k].second.device() == Device::cuda());
      testing::require_close(gpu_state[k].second, cpu_state[k].second, tol, 1e-30, gpu_state[k].first.c_str());
    }
  }
}

TEST_CASE("clip_grad_norm on GPU gradients equals the CPU", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (DType dtype : {DType::f32, DType::f64}) {
    const double tol = dtype == DType::f32 ? 1e-6 : 1e-12;
    for (double max_norm : {0.0, 1.0, 1e6}) {  // measure only, clip, too large to clip
      Twins twins = make_parameters(dtype, 3);
      set_gradients(twins, dtype, 20, 1.0);
      twins.cpu[2].second.zero_grad();  // a parameter without a gradient is skipped
      twins.gpu[2].second.zero_grad();
      const double cpu_norm = train::clip_grad_norm(variables(twins.cpu), max_norm);
      const double gpu_norm = train::clip_grad_norm(variables(twins.gpu), max_norm);
      CHECK(gpu_norm == Approx(cpu_norm).epsilon(1e-12));
      for (std::size_t k = 0; k < twins.cpu.size(); ++k) {
        if (!twins.cpu[k].second.grad().defined()) {
          CHECK(!twins.gpu[k].second.grad().defined());
          continue;
        }
        REQUIRE(twins.gpu[k].second.grad().device() == Device::cuda());
        testing::require_close(twins.gpu[k].second.grad(), twins.cpu[k].second.grad(), tol, 1e-30, "clipped grad");
      }
    }
  }
}

TEST_CASE("Adam::step refuses a parameter moved to another device after the optimizer was made", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (bool to_gpu : {true, false}) {
    const Device made_on = to_gpu ? Device::cpu() : Device::cuda(), moved_to = to_gpu ? Device::cuda() : Device::cpu();
    Variable parameter(Tensor::ones({8}, DType::f32, made_on), true);
    train::Adam adam({{"w", parameter}});  // moments on `made_on`
    parameter.mutable_data() = parameter.data().to(moved_to);
    parameter.set_grad(Tensor::ones({8}, DType::f32, moved_to));
    // Not a host read of GPU memory (or a kernel on host memory): an error naming the step and both devices.
    CHECK_THROWS_WITH(adam.step(1e-3), Catch::Contains("Adam::step") && Catch::Contains("different devices"));
  }
}
