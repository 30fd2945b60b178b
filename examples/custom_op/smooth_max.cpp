#include "smooth_max.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/error.h"

namespace custom_op {

namespace {

// Plain loops over contiguous data: the op is small, and agf's tensors hand out their raw pointers.
void check_operands(const char* what, const agf::Tensor& a, const agf::Tensor& b) {
  AGF_CHECK(a.shape() == b.shape() && a.dtype() == b.dtype(), "{}: operands {} and {} differ", what, a.description(),
            b.description());
  AGF_CHECK(a.device().is_cpu(), "{}: CPU tensors only, got {}", what, a.description());
  AGF_CHECK(a.dtype() == agf::DType::f32 || a.dtype() == agf::DType::f64, "{}: f32 or f64 only, got {}", what,
            a.description());
}

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

template <class T>
void forward_loop(const T* a, const T* b, T* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = std::max(a[i], b[i]) + std::log1p(std::exp(-std::abs(a[i] - b[i])));
}

template <class T>
void backward_loop(const T* grad_output, const T* a, const T* b, T* grad_a, T* grad_b, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const T share_of_a = sigmoid(a[i] - b[i]);  // dy/da
    grad_a[i] = grad_output[i] * share_of_a;
    grad_b[i] = grad_output[i] * (T(1) - share_of_a);  // dy/db = 1 - dy/da
  }
}

}  // namespace

agf::Tensor smooth_max_forward(const agf::Tensor& a_in, const agf::Tensor& b_in) {
  check_operands("smooth_max", a_in, b_in);
  const agf::Tensor a = a_in.contiguous(), b = b_in.contiguous();  // views (transposes, slices) are allowed
  agf::Tensor y = agf::Tensor::empty(a.shape(), a.dtype());
  if (a.dtype() == agf::DType::f64) {
    forward_loop(a.data<double>(), b.data<double>(), y.data<double>(), a.numel());
  } else {
    forward_loop(a.data<float>(), b.data<float>(), y.data<float>(), a.numel());
  }
  return y;
}

std::pair<agf::Tensor, agf::Tensor> smooth_max_backward(const agf::Tensor& grad_output_in, const agf::Tensor& a_in,
                                                        const agf::Tensor& b_in) {
  check_operands("smooth_max_backward", a_in, b_in);
  check_operands("smooth_max_backward", grad_output_in, a_in);
  const agf::Tensor g = grad_output_in.contiguous(), a = a_in.contiguous(), b = b_in.contiguous();
  agf::Tensor grad_a = agf::Tensor::empty(a.shape(), a.dtype()), grad_b = agf::Tensor::empty(a.shape(), a.dtype());
  if (a.dtype() == agf::DType::f64) {
    backward_loop(g.data<double>(), a.data<double>(), b.data<double>(), grad_a.data<double>(), grad_b.data<double>(),
                  a.numel());
  } else {
    backward_loop(g.data<float>(), a.data<float>(), b.data<float>(), grad_a.data<float>(), grad_b.data<float>(),
                  a.numel());
  }
  return {grad_a, grad_b};
}

agf::Variable smooth_max(const agf::Variable& a, const agf::Variable& b) {
  // The closure keeps the inputs' tensors, which the backward needs; agf frees them after backward().
  return agf::make_result(smooth_max_forward(a.data(), b.data()), "smooth_max", {a, b},
                          [a_data = a.data(), b_data = b.data()](const agf::Tensor& grad_output) {
                            auto [grad_a, grad_b] = smooth_max_backward(grad_output, a_data, b_data);
                            return std::vector<agf::Tensor>{grad_a, grad_b};
                          });
}

}  // namespace custom_op
