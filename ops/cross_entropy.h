#pragma once
// Cross-entropy fused with log-softmax, with label smoothing as PyTorch defines it:
//
//   loss_r = (1-ε)·(-log p[r, y_r]) + ε·mean_v(-log p[r, v]),   p = softmax(logits[r, :])
//   loss   = Σ_{r: y_r ≠ ignore} loss_r / #{r: y_r ≠ ignore}        (0 when every row is ignored)
#include <cstdint>

#include "core/tensor.h"

namespace agf::ops {

struct CrossEntropyOptions {
  double label_smoothing = 0.0;
  int64_t ignore_index = -100;
};

// logits [N, V] (f32/f64), targets [N] (i32/i64) -> scalar loss.
Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options);
// dL/dlogits[r, v] = g · (p[r, v] - (1-ε)·[v = y_r] - ε/V) / count   for non-ignored rows, 0 otherwise
Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets,
                              const CrossEntropyOptions& options);

}  // namespace agf::ops
