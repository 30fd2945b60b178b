#pragma once
// The label-smoothed cross-entropy of one row from its log-sum-exp, written once for the CPU and the
// CUDA kernels (A = double on the CPU, with lse computed in the logits' type; acc_t on a GPU):
//
//   -log p[y]        = lse - z_y
//   mean_v(-log p[v]) = lse - mean_v z_v
//   loss_r           = (1-ε)·(lse - z_y) + ε·(lse - mean_v z_v)
#include "core/host_device.h"

namespace agf::ops {

template <class A>
AGF_HOST_DEVICE inline A smoothed_row_loss(A lse, A target_logit, A mean_logit, A smoothing) {
  return (A(1) - smoothing) * (lse - target_logit) + smoothing * (lse - mean_logit);
}

}  // namespace agf::ops
