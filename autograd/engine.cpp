// The backward engine: topological order, one pass, gradient accumulation, graph release.
#include <unordered_map>
#include <unordered_set>

#include "autograd/variable.h"
#include "ops/elementwise.h"

namespace agf {

namespace {
thread_local bool grad_mode_enabled = true;

// Adds `increment` into a leaf's .grad() (undefined = zero), in the leaf's gradient dtype (its data's
// unless accumulate_grad_in chose another). The first gradient is copied, so a leaf's .grad() is always a
// fresh contiguous tensor that aliases nothing the caller holds.
void accumulate_into_leaf(VariableState& leaf, const Tensor& increment) {
  const bool convert = leaf.grad_dtype && *leaf.grad_dtype != increment.dtype();
  const Tensor term = convert ? increment.to(*leaf.grad_dtype) : increment;
  if (!leaf.grad.defined()) {
    leaf.grad = convert ? term : increment.clone();
  } else {
    leaf.grad = ops::add(leaf.grad, term);
  }
}
}  // namespace

bool grad_enabled() { return grad_mode_enabled; }
NoGradGuard::NoGradGuard() : previous_(grad_mode_enabled) { grad_mode_enabled = false; }
NoGradGuard::~NoGradGuard() { grad_mode_enabled = previous_; }

Variable::Variable(Tensor data, bool requires_grad) : state_(std::make_shared<VariableState>()) {
  AGF_CHECK(data.defined(), "Variable: cannot wrap an undefined tensor");
  AGF_CHECK(!requires_grad || is_floating(data.dtype()),
            "Variable: only floating-point tensors can require a gradient, got {}", data.description());
  state_->data = std::move(data);
  state_->requires_grad = requires_grad;
}

std::vector<Tensor> Node::apply(const Tensor& grad_output) const {
  AGF_CHECK(!released_,
            "backward through the graph a second time: op '{}' already ran its backward and freed "
            "its saved tensors (run the forward pass again)",
            name_);
  std::vector<Tensor> grads = backward_(grad_output);
  AGF_CHECK(grads.size() == inputs_.size(), "op '{}': backward returned {} gradients for {} inputs", name_,
            grads.size(), inputs_.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() || !inputs_[i].requires_grad()) continue;
    AGF_CHECK(grads[i].shape() == inputs_[i].shape() && grads[i].dtype() == inputs_[i].dtype() &&
                  grads[i].device() == inputs_[i].data().device(),
              "op '{}': gradient of input {} is {} but the input is {}", name_, i, grads[i].description(),
              inputs_[i].data().description());
  }
  return grads;
}

void Node::release() {
  inputs_.clear();
  backward_ = nullptr;
  released_ = true;
}

Variable make_result(Tensor data, const std::string& name, std::vector<Variable> inputs,
                     std::function<std::vector<Tensor>(const Tensor&)> backward) {
  Variable result(std::move(data), false);
  if (!grad_mode_enabled) return result;
  bool any = false;
  for (const Variable& input : inputs) any = any || input.requires_grad();
  if (!any) return result;
  result.state_->requires_grad = true;
  result.state_->grad_fn = std::make_shared<Node>(name, std::move(inputs), std::move(backward));
  return result;
}

void Variable::backward() const {
  AGF_CHECK(defined(), "backward() on an undefined variable");
  AGF_CHECK(data().numel() == 1,
            "backward() without a gradient needs a one-element output, got {}; pass "
            "the gradient of the loss with respect to it: backward(grad)",
            data().description());
  backward(Tensor::ones(data().shape(), data().dtype(), data().device()));
}

void Variable::backward(const Tensor& grad_output) const {
  AGF_CHECK(defined() && requires_grad(), "backward() on a variable that does not require a gradient ({})",
            defined() ? data().description() : "undefined");
  AGF_CHECK(grad_output.shape() == shape() && grad_output.dtype() == dtype() && grad_output.device() == data().device(),
            "backward(grad): grad {} does not match the output {}", grad_output.description(), data().description());
  if (is_leaf()) {
    accumulate_into_leaf(*state_, grad_output);
    return;
  }
  AGF_CHECK(!grad_fn()->released(),
            "backward through the graph a second time: op '{}' already freed its saved "
            "tensors (run the forward pass again)",
            grad_fn()->name());
  // Topological order of the variables reachable from this output (iterative DFS, post-order). `order`
  // holds Variables, not raw states, so that intermediates stay alive while nodes release their inputs.
  std::vector<Variable> order;
  std::unordered_set<VariableState*> visited{state_.get()};
  std::vector<std::pair<Variable, std::size_t>> stack{{*this, 0}};
  while (!stack.empty()) {
    const Node* node = stack.back().first.grad_fn().get();
    std::size_t& next_input = stack.back().second;
    if (node && next_input < node->inputs().size()) {
      const Variable input = node->inputs()[next_input++];
      if (input.grad_fn() && visited.insert(input.state()).second) stack.push_back({input, 0});
      continue;
    }
    order.push_back(std::move(stack.back().first));
    stack.pop_back();
  }
  // Reverse topological order: every node runs after all of its consumers have contributed.
  std::unordered_map<VariableState*, Tensor> pending{{state_.get(), grad_output}};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    VariableState* state = it->state();
    auto found = pending.find(state);
    if (found == pending.end()) continue;
    const Tensor grad = std::move(found->second);
    pending.erase(found);
    const std::shared_ptr<Node> node = state->grad_fn;
    const std::vector<Tensor> input_grads = node->apply(grad);
    for (std::size_t i = 0; i < input_grads.size(); ++i) {
      const Variable& input = node->inputs()[i];
      if (!input_grads[i].defined() || !input.requires_grad()) continue;
      if (input.is_leaf()) {
        accumulate_into_leaf(*input.state(), input_grads[i]);
      } else {
        Tensor& slot = pending[input.state()];
        slot = slot.defined() ? ops::add(slot, input_grads[i]) : input_grads[i];
      }
    }
    node->release();
  }
}

}  // namespace agf
