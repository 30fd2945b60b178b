#pragma once
// Adam (Kingma & Ba) with bias correction, as PyTorch's torch.optim.Adam (no weight decay):
//   m ← β1·m + (1-β1)·g,   v ← β2·v + (1-β2)·g²
//   θ ← θ - lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + eps)
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "train/lr_schedule.h"  // inverse_sqrt_lr, once declared here

namespace agf::train {

struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.98;
  double eps = 1e-9;
};

class Adam {
 public:
  Adam(std::vector<std::pair<std::string, Variable>> parameters, AdamOptions options = {});

  // One update with learning rate `lr` from the parameters' current .grad() (missing grads count as 0).
  void step(double lr);
  void zero_grad();
  int64_t steps() const { return steps_; }

  // The moments as named tensors ("exp_avg.<param>", "exp_avg_sq.<param>") for checkpoints, and back.
  std::vector<std::pair<std::string, Tensor>> state() const;
  void load_state(const std::vector<std::pair<std::string, Tensor>>& tensors, int64_t steps);

 private:
  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<Tensor> first_moment_, second_moment_;
  AdamOptions options_;
  int64_t steps_ = 0;
};

// Scales all gradients so that their global L2 norm is at most max_norm; returns the norm before scaling.
// max_norm <= 0 only measures.
double clip_grad_norm(const std::vector<Variable>& parameters, double max_norm);

}  // namespace agf::train
