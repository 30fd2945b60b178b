#pragma once
// One element of Adam's update (train/adam.h), written once for the CPU loop and the CUDA kernel. Every
// dtype is updated in f64 and rounded once per stored value, as the CPU always did.
#include <cmath>

#include "core/host_device.h"

namespace agf::train {

struct AdamConstants {
  double beta1, beta2, eps, lr;
  double correction1, correction2;  // 1 - β1^t, 1 - β2^t
};

// m ← β1·m + (1-β1)·g,  v ← β2·v + (1-β2)·g²,  θ ← θ - lr·(m/c1)/(sqrt(v/c2) + eps)
// computed as θ - (lr/c1)·m / (sqrt(v·(1/c2)) + eps): lr/c1 and 1/c2 are the same for every element (a loop
// computes them once), which leaves one division and one square root per element, the update's slowest
// instructions, instead of three divisions and one root. (Each form rounds a little differently: within a few
// units in the last place of f64.)
AGF_HOST_DEVICE inline void adam_update(double& theta, double& m, double& v, double g, const AdamConstants& k) {
  const double step_size = k.lr / k.correction1, inverse_correction2 = 1 / k.correction2;
  m = k.beta1 * m + (1 - k.beta1) * g;
  v = k.beta2 * v + (1 - k.beta2) * g * g;
  theta = theta - step_size * m / (::sqrt(v * inverse_correction2) + k.eps);
}

}  // namespace agf::train
