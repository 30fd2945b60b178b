#pragma once
// gradcheck: compares the hand-written backward of a function against central differences, in f64.
//
// For f(inputs) -> y of any shape, the checked scalar is L = Σ y ⊙ w with a fixed random w (so every
// output element contributes with its own weight). For each element x_i of each input:
//     numerical_i = (L(x_i + h) - L(x_i - h)) / 2h,   analytical_i = (dL/dx_i from backward()).
// The error of one input is  max_i |analytical_i - numerical_i| / max(max_i |numerical_i|, 1e-6):
// the worst deviation relative to the gradient's own scale.
#include <functional>
#include <string>
#include <vector>

#include "autograd/variable.h"

namespace agf {

struct GradcheckOptions {
  double step = 1e-6;       // h
  double tolerance = 1e-6;  // on the relative error above
  uint64_t seed = 1234;     // of the output weights w
  std::vector<bool> check;  // per input: false skips it (e.g. integer ids); empty = check all
};

struct GradcheckResult {
  std::vector<double> relative_error;  // per input (0 for skipped inputs)
  double worst = 0;
  bool passed = true;
};

using CheckedFunction = std::function<Variable(const std::vector<Variable>&)>;

// `inputs` must be f64 (views allowed: a transposed or sliced input is perturbed in place, element by
// element, through its own strides). Inside a GradcheckDeviceScope for a GPU, the inputs are copied to
// that device (contiguous) and f runs there; perturbations are made on the host copy and uploaded.
GradcheckResult gradcheck(const CheckedFunction& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

// While alive, every gradcheck on this thread evaluates on `device` (`agf gradcheck --device cuda`):
// the registered checks then prove the GPU kernels' backward passes in f64 without being rewritten.
class GradcheckDeviceScope {
 public:
  explicit GradcheckDeviceScope(Device device);
  ~GradcheckDeviceScope();
  GradcheckDeviceScope(const GradcheckDeviceScope&) = delete;
  GradcheckDeviceScope& operator=(const GradcheckDeviceScope&) = delete;
  static Device current();  // the CPU unless a scope says otherwise

 private:
  Device previous_;
};

// A named check of one op (or one configuration of an op) that `agf gradcheck` and the tests run.
struct OpCheck {
  std::string name;
  std::string description;
  std::function<GradcheckResult()> run;
};

// Every check: agf's own (each op of autograd/functions.h, every attention configuration), then those
// added with register_op_check, in the order added. agf's own are added on the first call, by a call
// rather than by self-registering statics, which a static library would lose (autograd/builtin_op_checks.h).
std::vector<OpCheck>& op_checks();
const OpCheck* find_op_check(const std::string& name);  // null when there is none of that name

// Adds a program's own check to the registry (before any thread runs the checks: the registry has no lock).
void register_op_check(OpCheck check);

}  // namespace agf
