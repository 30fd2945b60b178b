#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>

#include "autograd/builtin_op_checks.h"
#include "autograd/functions.h"
#include "core/random.h"

namespace agf {

namespace {

thread_local Device gradcheck_device = Device::cpu();

// Storage offset (in elements) of the row-major element `index` of a strided tensor.
int64_t element_offset(const Tensor& tensor, int64_t index) {
  int64_t offset = 0;
  for (int64_t axis = tensor.dim() - 1; axis >= 0; --axis) {
    offset += (index % tensor.size(axis)) * tensor.strides()[axis];
    index /= tensor.size(axis);
  }
  return offset;
}

// The inputs as f sees them: themselves on the CPU, fresh contiguous copies on another device.
std::vector<Tensor> on_device(const std::vector<Tensor>& inputs, Device device) {
  std::vector<Tensor> moved;
  for (const Tensor& input : inputs) moved.push_back(input.to(device));
  return moved;
}

// L = Σ f(inputs) ⊙ weights, evaluated without recording a graph.
double weighted_output(const CheckedFunction& f, const std::vector<Tensor>& inputs, const Tensor& weights) {
  NoGradGuard no_grad;
  std::vector<Variable> variables;
  for (const Tensor& input : on_device(inputs, gradcheck_device)) variables.emplace_back(input, false);
  const Variable y = f(variables);
  const std::vector<double> values = y.data().to_double_vector();
  const std::vector<double> w = weights.to_double_vector();
  double total = 0;
  for (std::size_t i = 0; i < values.size(); ++i) total += values[i] * w[i];
  return total;
}

}  // namespace

GradcheckResult gradcheck(const CheckedFunction& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  auto should_check = [&](std::size_t i) { return options.check.empty() || options.check[i]; };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    AGF_CHECK(!should_check(i) || inputs[i].dtype() == DType::f64,
              "gradcheck: input {} is {}; checked inputs must be f64", i, inputs[i].description());
  }
  // Analytical gradients: backward from L = Σ y ⊙ w, i.e. backward(w).
  const std::vector<Tensor> device_inputs = on_device(inputs, gradcheck_device);
  std::vector<Variable> variables;
  for (std::size_t i = 0; i < inputs.size(); ++i) variables.emplace_back(device_inputs[i], should_check(i));
  const Variable y = f(variables);
  Generator generator(options.seed);
  const Tensor weights = uniform(y.shape(), generator, -1.0, 1.0, DType::f64).to(y.data().device());
  if (y.requires_grad()) y.backward(weights);

  GradcheckResult result;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    result.relative_error.push_back(0.0);
    if (!should_check(i)) continue;
    const Tensor& input = inputs[i];
    const Tensor& grad = variables[i].grad();
    const std::vector<double> analytical = grad.defined()
                                               ? grad.to_double_vector()
                                               : std::vector<double>(static_cast<std::size_t>(input.numel()), 0.0);
    double* data = input.data<double>();
    double largest = 0, worst = 0;
    std::vector<double> numerical(static_cast<std::size_t>(input.numel()));
    for (int64_t e = 0; e < input.numel(); ++e) {
      double& element = data[element_offset(input, e)];
      const double original = element;
      element = original + options.step;
      const double plus = weighted_output(f, inputs, weights);
      element = original - options.step;
      const double minus = weighted_output(f, inputs, weights);
      element = original;
      numerical[e] = (plus - minus) / (2 * options.step);
      largest = std::max(largest, std::abs(numerical[e]));
    }
    for (int64_t e = 0; e < input.numel(); ++e) worst = std::max(worst, std::abs(analytical[e] - numerical[e]));
    result.relative_error.back() = worst / std::max(largest, 1e-6);
    result.worst = std::max(result.worst, result.relative_error.back());
  }
  result.passed = result.worst <= options.tolerance && std::isfinite(result.worst);
  return result;
}

GradcheckDeviceScope::GradcheckDeviceScope(Device device) : previous_(gradcheck_device) { gradcheck_device = device; }
GradcheckDeviceScope::~GradcheckDeviceScope() { gradcheck_device = previous_; }
Device GradcheckDeviceScope::current() { return gradcheck_device; }

std::vector<OpCheck>& op_checks() {
  static std::vector<OpCheck> checks = [] {
    std::vector<OpCheck> builtin;
    add_function_op_checks(builtin);
    add_attention_op_checks(builtin);
    return builtin;
  }();
  return checks;
}

void register_op_check(OpCheck check) { op_checks().push_back(std::move(check)); }

const OpCheck* find_op_check(const std::string& name) {
  for (const OpCheck& check : op_checks()) {
    if (check.name == name) return &check;
  }
  return nullptr;
}

}  // namespace agf
