#pragma once
// Module: a named tree of parameters, as in PyTorch. A module registers its own parameters and its
// children under names; named_parameters() walks the tree and yields dotted names
// ("encoder.layers.0.self_attn.q_proj.weight") — exactly the checkpoint names of SPEC §7.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"

namespace agf::nn {

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Every parameter of this module and its descendants, depth-first in registration order.
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  std::vector<Variable> parameters() const;
  int64_t parameter_count() const;  // number of scalar parameters

  // Where the parameters live (the first parameter's device; the CPU for a module without parameters).
  Device device() const;
  // Move every parameter to `device` / convert every floating parameter to `dtype`. Each parameter's data
  // is replaced inside its Variable, so whatever holds the Variables (an optimizer, a shared table) sees the
  // new tensor; gradients are dropped. No copy for a parameter already there.
  void to(Device device);
  void to(DType dtype);

  // Training mode turns dropout on; evaluation mode off. Applies to the whole subtree.
  void train(bool on = true);
  void eval() { train(false); }
  bool training() const { return training_; }

 protected:
  // Registers a learnable parameter (requires_grad) initialised with `value`; returns it.
  Variable register_parameter(const std::string& name, Tensor value);
  // Registers a child module; returns it for convenient member initialisation.
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out) const;

  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace agf::nn
