#include "autograd/attention.h"

namespace agf {

Variable attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& key_lengths,
                   const PositionalVariables& positional, const ops::AttentionOptions& options) {
  ops::PositionalParameters parameters;
  std::vector<Variable> inputs{q, k, v};
  std::vector<ops::PositionalParameter> present;  // which parameters are inputs 3, 4, ..., in the table's order
  for (const ops::PositionalParameterSpec& spec : ops::kPositionalParameterTable) {
    const Variable& parameter = positional[spec.id];
    if (!parameter.defined()) continue;
    parameters[spec.id] = parameter.data();
    inputs.push_back(parameter);
    present.push_back(spec.id);
  }
  ops::AttentionForward forward = ops::attention_forward(q.data(), k.data(), v.data(), key_lengths, parameters,
                                                         options);
  return make_result(forward.output, "attention", inputs,
                     [q = q.data(), k = k.data(), v = v.data(), key_lengths, parameters, options,
                      saved = std::move(forward.saved), present](const Tensor& grad) {
                       ops::AttentionGradients grads = ops::attention_backward(grad, q, k, v, key_lengths, parameters,
                                                                               options, saved);
                       std::vector<Tensor> out{grads.q, grads.k, grads.v};
                       for (ops::PositionalParameter id : present) out.push_back(grads.positional[id]);
                       return out;
                     });
}

}  // namespace agf
