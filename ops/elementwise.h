#pragma once
// Pointwise ops, each forward with its hand-written backward. Binary ops broadcast as NumPy does; their
// backward returns gradients already reduced (sum_to) to each operand's own shape.
#include <utility>

#include "core/tensor.h"

namespace agf::ops {

// ---- binary, broadcasting ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);

// d(a+b)/da = 1, d(a+b)/db = 1           -> (sum_to(g, a), sum_to(g, b))
std::pair<Tensor, Tensor> add_backward(const Tensor& grad, const Shape& a_shape, const Shape& b_shape);
// d(a-b)/da = 1, d(a-b)/db = -1
std::pair<Tensor, Tensor> sub_backward(const Tensor& grad, const Shape& a_shape, const Shape& b_shape);
// d(a·b)/da = b, d(a·b)/db = a
std::pair<Tensor, Tensor> mul_backward(const Tensor& grad, const Tensor& a, const Tensor& b);
// d(a/b)/da = 1/b, d(a/b)/db = -a/b²
std::pair<Tensor, Tensor> div_backward(const Tensor& grad, const Tensor& a, const Tensor& b);

// ---- with a scalar (no gradient for the scalar) ----
Tensor add_scalar(const Tensor& x, double value);
Tensor mul_scalar(const Tensor& x, double value);
Tensor rsub_scalar(const Tensor& x, double value);  // value - x
Tensor rdiv_scalar(const Tensor& x, double value);  // value / x
Tensor pow_scalar(const Tensor& x, double exponent);
// d(x^p)/dx = p·x^(p-1)
Tensor pow_scalar_backward(const Tensor& grad, const Tensor& x, double exponent);

// ---- unary ----
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu_tanh(const Tensor& x);  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
Tensor gelu_erf(const Tensor& x);   // x·Φ(x) = 0.5·x·(1 + erf(x/√2))

// Backward of each unary op; y is the forward output where the derivative is cheaper in terms of it.
Tensor exp_backward(const Tensor& grad, const Tensor& y);        // g·y
Tensor log_backward(const Tensor& grad, const Tensor& x);        // g/x
Tensor sqrt_backward(const Tensor& grad, const Tensor& y);       // g/(2y)
Tensor tanh_backward(const Tensor& grad, const Tensor& y);       // g·(1-y²)
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y);    // g·y·(1-y)
Tensor relu_backward(const Tensor& grad, const Tensor& x);       // g·[x>0]
Tensor gelu_tanh_backward(const Tensor& grad, const Tensor& x);  // see ops/elementwise_functors.h
Tensor gelu_erf_backward(const Tensor& grad, const Tensor& x);   // g·(Φ(x) + x·φ(x))

}  // namespace agf::ops
