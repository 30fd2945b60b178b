#pragma once
// Differentiable ops on Variables. Each wraps an ops/ forward and records the matching ops/ backward.
// The full table of derivatives, with the function computing each, is in docs/derivatives.md.
#include <cstdint>
#include <vector>

#include "autograd/variable.h"
#include "ops/cross_entropy.h"
#include "ops/reduce.h"

namespace agf {

using ops::Axes;

// ---- arithmetic (NumPy broadcasting) ----
Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
Variable mul(const Variable& a, const Variable& b);
Variable div(const Variable& a, const Variable& b);
Variable add_scalar(const Variable& x, double value);
Variable mul_scalar(const Variable& x, double value);
Variable pow(const Variable& x, double exponent);
Variable neg(const Variable& x);

inline Variable operator+(const Variable& a, const Variable& b) { return add(a, b); }
inline Variable operator-(const Variable& a, const Variable& b) { return sub(a, b); }
inline Variable operator*(const Variable& a, const Variable& b) { return mul(a, b); }
inline Variable operator/(const Variable& a, const Variable& b) { return div(a, b); }
inline Variable operator-(const Variable& x) { return neg(x); }
inline Variable operator+(const Variable& x, double value) { return add_scalar(x, value); }
inline Variable operator*(const Variable& x, double value) { return mul_scalar(x, value); }
inline Variable operator*(double value, const Variable& x) { return mul_scalar(x, value); }

// ---- pointwise ----
Variable exp(const Variable& x);
Variable log(const Variable& x);
Variable sqrt(const Variable& x);
Variable tanh(const Variable& x);
Variable sigmoid(const Variable& x);
Variable relu(const Variable& x);
Variable gelu_tanh(const Variable& x);
Variable gelu_erf(const Variable& x);

// ---- linear algebra ----
Variable matmul(const Variable& a, const Variable& b);

// ---- reductions ----
Variable sum(const Variable& x, const Axes& axes = {}, bool keepdim = false);
Variable mean(const Variable& x, const Axes& axes = {}, bool keepdim = false);
Variable max(const Variable& x, const Axes& axes = {}, bool keepdim = false);

// ---- normalization and probabilities (last axis) ----
Variable softmax(const Variable& x);
Variable log_softmax(const Variable& x);
Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, double eps = 1e-5);
Variable cross_entropy(const Variable& logits, const Tensor& targets, const ops::CrossEntropyOptions& options = {});

// ---- lookup and regularization ----
Variable embedding(const Variable& weight, const Tensor& ids);
// Inverted dropout; `seed`/`offset` select the Philox stream (see ops/dropout.h). Identity when p == 0.
Variable dropout(const Variable& x, double p, uint64_t seed, uint64_t offset);

// ---- shape (views; backward maps the gradient back through the same view) ----
Variable reshape(const Variable& x, const Shape& shape);
Variable permute(const Variable& x, const std::vector<int64_t>& order);
Variable transpose(const Variable& x, int64_t axis_a, int64_t axis_b);
Variable slice(const Variable& x, int64_t axis, int64_t start, int64_t stop, int64_t step = 1);
Variable expand(const Variable& x, const Shape& shape);
Variable concat(const std::vector<Variable>& parts, int64_t axis);
Variable contiguous(const Variable& x);

// ---- dtype ----
// y = x converted to `dtype` (rounded to nearest even when narrowing); dL/dx = dL/dy converted back to
// x's dtype. The identity (no node, no copy) when x already has `dtype`. Mixed precision uses it to
// compute the loss in f32 from half-precision logits, as PyTorch's autocast does.
Variable cast(const Variable& x, DType dtype);

}  // namespace agf
