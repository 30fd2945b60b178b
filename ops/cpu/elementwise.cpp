// Pointwise ops: every one is a functor of ops/elementwise_functors.h handed to map_elements, which runs
// it on the inputs' device (the CPU loop of ops/cpu/map_elements.h, or the CUDA map kernel). The
// formulas live in the functors only, so the CPU and the GPU compute each op the same way.
#include "ops/elementwise.h"

#include "ops/elementwise_functors.h"
#include "ops/map_elements.h"
#include "ops/reduce.h"

namespace agf::ops {

namespace fn = functors;

// ---- binary ----------------------------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) { return map_elements("add", fn::Add{}, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return map_elements("sub", fn::Sub{}, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return map_elements("mul", fn::Mul{}, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return map_elements("div", fn::Div{}, a, b); }

std::pair<Tensor, Tensor> add_backward(const Tensor& grad, const Shape& a_shape, const Shape& b_shape) {
  return {sum_to(grad, a_shape), sum_to(grad, b_shape)};
}

std::pair<Tensor, Tensor> sub_backward(const Tensor& grad, const Shape& a_shape, const Shape& b_shape) {
  return {sum_to(grad, a_shape), neg(sum_to(grad, b_shape))};
}

std::pair<Tensor, Tensor> mul_backward(const Tensor& grad, const Tensor& a, const Tensor& b) {
  return {sum_to(mul(grad, b), a.shape()), sum_to(mul(grad, a), b.shape())};
}

std::pair<Tensor, Tensor> div_backward(const Tensor& grad, const Tensor& a, const Tensor& b) {
  Tensor grad_a = map_elements("div_backward", fn::Div{}, grad, b);                    // g/b
  Tensor grad_b = map_elements("div_backward", fn::DivBackwardDivisor{}, grad, a, b);  // -g·a/b²
  return {sum_to(grad_a, a.shape()), sum_to(grad_b, b.shape())};
}

// ---- scalar ----------------------------------------------------------------------------------------

Tensor add_scalar(const Tensor& x, double value) { return map_elements("add_scalar", fn::AddScalar{value}, x); }
Tensor mul_scalar(const Tensor& x, double value) { return map_elements("mul_scalar", fn::MulScalar{value}, x); }
Tensor rsub_scalar(const Tensor& x, double value) { return map_elements("rsub_scalar", fn::RsubScalar{value}, x); }
Tensor rdiv_scalar(const Tensor& x, double value) { return map_elements("rdiv_scalar", fn::RdivScalar{value}, x); }
Tensor pow_scalar(const Tensor& x, double exponent) { return map_elements("pow", fn::PowScalar{exponent}, x); }
Tensor pow_scalar_backward(const Tensor& grad, const Tensor& x, double exponent) {
  return map_elements("pow_backward", fn::PowScalarBackward{exponent}, grad, x);
}

// ---- unary -----------------------------------------------------------------------------------------

Tensor neg(const Tensor& x) { return map_elements("neg", fn::Neg{}, x); }
Tensor exp(const Tensor& x) { return map_elements("exp", fn::Exp{}, x); }
Tensor log(const Tensor& x) { return map_elements("log", fn::Log{}, x); }
Tensor sqrt(const Tensor& x) { return map_elements("sqrt", fn::Sqrt{}, x); }
Tensor tanh(const Tensor& x) { return map_elements("tanh", fn::Tanh{}, x); }
Tensor sigmoid(const Tensor& x) { return map_elements("sigmoid", fn::Sigmoid{}, x); }
Tensor relu(const Tensor& x) { return map_elements("relu", fn::Relu{}, x); }
Tensor gelu_tanh(const Tensor& x) { return map_elements("gelu_tanh", fn::GeluTanh{}, x); }
Tensor gelu_erf(const Tensor& x) { return map_elements("gelu_erf", fn::GeluErf{}, x); }

Tensor exp_backward(const Tensor& grad, const Tensor& y) { return mul(grad, y); }
Tensor log_backward(const Tensor& grad, const Tensor& x) { return div(grad, x); }
Tensor sqrt_backward(const Tensor& grad, const Tensor& y) {
  return map_elements("sqrt_backward", fn::SqrtBackward{}, grad, y);
}
Tensor tanh_backward(const Tensor& grad, const Tensor& y) {
  return map_elements("tanh_backward", fn::TanhBackward{}, grad, y);
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y) {
  return map_elements("sigmoid_backward", fn::SigmoidBackward{}, grad, y);
}
Tensor relu_backward(const Tensor& grad, const Tensor& x) {
  return map_elements("relu_backward", fn::ReluBackward{}, grad, x);
}
Tensor gelu_tanh_backward(const Tensor& grad, const Tensor& x) {
  return map_elements("gelu_tanh_backward", fn::GeluTanhBackward{}, grad, x);
}
Tensor gelu_erf_backward(const Tensor& grad, const Tensor& x) {
  return map_elements("gelu_erf_backward", fn::GeluErfBackward{}, grad, x);
}

}  // namespace agf::ops
