#include "nn/module.h"

namespace agf::nn {

Variable Module::register_parameter(const std::string& name, Tensor value) {
  for (const auto& [existing, parameter] : parameters_) {
    AGF_CHECK(existing != name, "Module: parameter '{}' registered twice", name);
  }
  Variable parameter(std::move(value), true);
  parameters_.emplace_back(name, parameter);
  return parameter;
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out) const {
  for (const auto& [name, parameter] : parameters_) out.emplace_back(prefix + name, parameter);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Variable>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  collect("", out);
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [name, parameter] : named_parameters()) out.push_back(parameter);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t count = 0;
  for (const auto& [name, parameter] : named_parameters()) count += parameter.data().numel();
  return count;
}

Device Module::device() const {
  const auto parameters = named_parameters();
  return parameters.empty() ? Device::cpu() : parameters.front().second.data().device();
}

void Module::to(Device device) {
  for (auto& [name, parameter] : named_parameters()) {
    if (parameter.data().device() == device) continue;
    parameter.mutable_data() = parameter.data().to(device);
    parameter.zero_grad();
  }
}

void Module::to(DType dtype) {
  AGF_CHECK(is_floating(dtype), "Module::to({}): parameters are floating-point", dtype_name(dtype));
  for (auto& [name, parameter] : named_parameters()) {
    if (parameter.dtype() == dtype) continue;
    parameter.mutable_data() = parameter.data().to(dtype);
    parameter.zero_grad();
  }
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

}  // namespace agf::nn
