#include "autograd/attention.h"

namespace agf {

namespace {
// The (name, variable) pairs of the defined positional parameters, in one fixed order.
std::vector<Variable PositionalVariables::*> parameter_members() {
  return {&PositionalVariables::G,   &PositionalVariables::rho,      &PositionalVariables::k,
          &PositionalVariables::lc2, &PositionalVariables::lc3,      &PositionalVariables::t5_table,
          &PositionalVariables::r1,  &PositionalVariables::r2};
}
std::vector<Tensor ops::PositionalParameters::*> tensor_members() {
  return {&ops::PositionalParameters::G,   &ops::PositionalParameters::rho,      &ops::PositionalParameters::k,
          &ops::PositionalParameters::lc2, &ops::PositionalParameters::lc3,      &ops::PositionalParameters::t5_table,
          &ops::PositionalParameters::r1,  &ops::PositionalParameters::r2};
}
}  // namespace

Variable attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& key_lengths,
                   const PositionalVariables& positional, const ops::AttentionOptions& options) {
  const auto variable_members = parameter_members();
  const auto data_members = tensor_members();
  ops::PositionalParameters parameters;
  std::vector<Variable> inputs{q, k, v};
  std::vector<std::size_t> present;  // which members are inputs 3, 4, ...
  for (std::size_t i = 0; i < variable_members.size(); ++i) {
    const Variable& parameter = positional.*variable_members[i];
    if (!parameter.defined()) continue;
    parameters.*data_members[i] = parameter.data();
    inputs.push_back(parameter);
    present.push_back(i);
  }
  ops::AttentionForward forward =
      ops::attention_forward(q.data(), k.data(), v.data(), key_lengths, parameters, options);
  return make_result(
      forward.output, "attention", inputs,
      [q = q.data(), k = k.data(), v = v.data(), key_lengths, parameters, options, saved = std::move(forward.saved),
       present, data_members](const Tensor& grad) {
        ops::AttentionGradients grads = ops::attention_backward(grad, q, k, v, key_lengths, parameters, options, saved);
        std::vector<Tensor> out{grads.q, grads.k, grads.v};
        for (std::size_t i : present) out.push_back(grads.positional.*data_members[i]);
        return out;
      });
}

}  // namespace agf
