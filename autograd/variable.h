#pragma once
// Reverse-mode automatic differentiation, micrograd-sized.
//
// A Variable is a tensor plus, when it was computed from variables that require a gradient, the Node
// that made it. A Node holds its input variables and one closure: given dL/d(output) it returns dL/d(input)
// for each input — the op's hand-written backward from ops/. backward() orders the nodes topologically,
// runs each closure once, accumulates into leaves' .grad(), and then frees the graph (inputs and saved
// tensors), so a second backward through the same graph is an error rather than a silent double count.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace agf {

class Node;

struct VariableState {
  Tensor data;
  Tensor grad;                      // accumulated gradient of a leaf; undefined until the first backward
  std::optional<DType> grad_dtype;  // a leaf's .grad() is summed in this dtype; unset: the data's
  std::shared_ptr<Node> grad_fn;    // null for leaves
  bool requires_grad = false;
};

class Variable {
 public:
  Variable() = default;
  explicit Variable(Tensor data, bool requires_grad = false);

  bool defined() const { return state_ != nullptr; }
  const Tensor& data() const { return state_->data; }
  Tensor& mutable_data() { return state_->data; }  // in-place parameter updates (optimizers)
  const Tensor& grad() const { return state_->grad; }
  void zero_grad() const { state_->grad = Tensor(); }
  void set_grad(Tensor grad) const { state_->grad = std::move(grad); }
  // A leaf's .grad() accumulates in `dtype` rather than the data's: each contribution is converted, then
  // added. Mixed precision keeps the gradients of bf16/f16 parameters in f32 this way, as PyTorch's AMP
  // keeps .grad in f32, so that a parameter used in several places (the tied embedding) and gradient
  // accumulation over batches sum in f32.
  void accumulate_grad_in(DType dtype) const { state_->grad_dtype = dtype; }
  bool requires_grad() const { return state_ && state_->requires_grad; }
  bool is_leaf() const { return state_->grad_fn == nullptr; }
  const std::shared_ptr<Node>& grad_fn() const { return state_->grad_fn; }

  const Shape& shape() const { return data().shape(); }
  int64_t dim() const { return data().dim(); }
  int64_t size(int64_t axis) const { return data().size(axis); }
  DType dtype() const { return data().dtype(); }
  double item() const { return data().item(); }

  // Backpropagates from a one-element variable (gradient 1) ...
  void backward() const;
  // ... or from any variable with the gradient of the loss with respect to it.
  void backward(const Tensor& grad_output) const;

  // The same data, cut from the graph.
  Variable detach() const { return Variable(data(), false); }

  VariableState* state() const { return state_.get(); }

 private:
  friend Variable make_result(Tensor, const std::string&, std::vector<Variable>,
                              std::function<std::vector<Tensor>(const Tensor&)>);
  std::shared_ptr<VariableState> state_;
};

class Node {
 public:
  using Backward = std::function<std::vector<Tensor>(const Tensor& grad_output)>;
  Node(std::string name, std::vector<Variable> inputs, Backward backward)
      : name_(std::move(name)), inputs_(std::move(inputs)), backward_(std::move(backward)) {}

  const std::string& name() const { return name_; }
  const std::vector<Variable>& inputs() const { return inputs_; }
  bool released() const { return released_; }
  // Runs the backward closure; checks it returned one gradient (or an undefined tensor) per input.
  std::vector<Tensor> apply(const Tensor& grad_output) const;
  void release();  // drops inputs and saved tensors once the node's backward has run

 private:
  std::string name_;
  std::vector<Variable> inputs_;
  Backward backward_;
  bool released_ = false;
};

// Creates the output variable of an op: records a Node when gradients are enabled and some input needs
// one; otherwise a plain leaf without history. `backward` captures what the op's backward needs.
Variable make_result(Tensor data, const std::string& name, std::vector<Variable> inputs,
                     std::function<std::vector<Tensor>(const Tensor&)> backward);

// While alive, ops record no graph (evaluation, optimizer steps). Nests.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
bool grad_enabled();

}  // namespace agf
