// Gradients through autograd on a GPU equal the CPU's in f64 (the CPU's are proven by gradcheck, see
// tests/autograd/test_gradcheck.cpp): graphs of pointwise ops, reductions, matmul and concat, with
// broadcasting and transposed views, run on both devices from the same inputs.
#include <catch2/catch.hpp>

#include <functional>

#include "autograd/functions.h"
#include "tests/cuda/op_compare.h"

using namespace agf;

namespace {

using Graph = std::function<Variable(const std::vector<Variable>&)>;

// Runs `graph` on `inputs` (f64 CPU tensors) on `device`, backward from a fixed output gradient; returns
// the output and each input's gradient, on the CPU.
std::vector<Tensor> forward_backward(const Graph& graph, const std::vector<Tensor>& inputs, Device device) {
  std::vector<Variable> variables;
  for (const Tensor& input : inputs) variables.emplace_back(input.to(device), true);
  const Variable y = graph(variables);
  const Tensor weights = testing::random_f64(y.shape(), 99, -1, 1);
  y.backward(weights.to(device));
  std::vector<Tensor> results{y.data().to(Device::cpu())};
  for (const Variable& v : variables) results.push_back(v.grad().to(Device::cpu()));
  return results;
}

void require_same_gradients(const char* name, const Graph& graph, const std::vector<Tensor>& inputs) {
  INFO(name);
  const std::vector<Tensor> cpu = forward_backward(graph, inputs, Device::cpu());
  const std::vector<Tensor> gpu = forward_backward(graph, inputs, Device::cuda());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    testing::require_close(gpu[i], cpu[i], 1e-11, 1e-12, i == 0 ? "output" : "gradient");
  }
}

}  // namespace

TEST_CASE("GPU autograd through pointwise ops, reductions, matmul and concat matches the CPU in f64",
          "[cuda][gpu][autograd]") {
  AGF_REQUIRE_GPU();
  const Tensor x = testing::random_f64({3, 5, 8}, 1), w = testing::random_f64({6, 8}, 2),
               b = testing::random_f64({6}, 3);
  require_same_gradients("linear + gelu + mean",
                         [](const std::vector<Variable>& v) {
                           return mean(gelu_tanh(matmul(v[0], transpose(v[1], 0, 1)) + v[2]), {-1});
                         },
                         {x, w, b});
  require_same_gradients("pointwise chain with broadcasting",
                         [](const std::vector<Variable>& v) {
                           const Variable s = sigmoid(v[0]) * tanh(v[1]) - exp(v[0] * 0.5) / (relu(v[1]) + 1.5);
                           return sqrt(pow(s, 2.0) + 0.1) + log(gelu_erf(s) + 2.0);
                         },
                         {testing::random_f64({4, 7}, 4), testing::random_f64({7}, 5)});
  require_same_gradients("max (ties) and sum over axes",
                         [](const std::vector<Variable>& v) {
                           return max(v[0], {1}, true) + sum(v[0], {0, 2}, true) * 0.3;
                         },
                         {testing::random_integers({2, 5, 3}, 6, -2, 2)});
  require_same_gradients("batched matmul of transposed views, concat",
                         [](const std::vector<Variable>& v) {
                           const Variable scores = matmul(v[0], transpose(v[1], -1, -2));
                           return concat({scores, transpose(v[0], 1, 2)}, 1);  // [2,4,4] and [2,3,4] -> [2,7,4]
                         },
                         {testing::random_f64({2, 4, 3}, 7), testing::random_f64({2, 4, 3}, 8)});
}
