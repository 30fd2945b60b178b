// Host side of the CUDA softmax: the checks of ops/cpu/softmax.cpp, contiguous operands, the launch.
#include "ops/cuda/softmax.h"

#include "ops/cuda/softmax_kernels.h"

namespace agf::ops::cuda {

namespace {

struct Rows {
  int64_t count = 0, length = 0;
};

Rows check_rows(const char* op, const Tensor& x, const Tensor* second) {
  check_defined(x, op, "x");
  AGF_CHECK(x.dim() >= 1, "{}: needs at least one axis, got {}", op, x.description());
  AGF_CHECK(is_floating(x.dtype()), "{}: needs a floating-point tensor, got {}", op, x.description());
  if (second) {
    check_defined(*second, op, "grad");
    AGF_CHECK(second->shape() == x.shape(), "{}: shapes differ ({} vs {})", op, x.description(), second->description());
    check_same_dtype(x, *second, op);
    check_same_device(x, *second, op);
  }
  const int64_t length = x.size(-1);
  return {length ? x.numel() / length : 0, length};
}

Tensor forward(const Tensor& x_in, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  const Rows rows = check_rows(op, x_in, nullptr);
  const Tensor x = x_in.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  agf::cuda::softmax_rows(x.dtype(), x.raw_data(), y.raw_data(), rows.count, rows.length, log, x.device().index);
  return y;
}

Tensor backward(const Tensor& grad_in, const Tensor& y_in, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  const Rows rows = check_rows(op, y_in, &grad_in);
  const Tensor grad = grad_in.contiguous(), y = y_in.contiguous();
  Tensor out = Tensor::empty(y.shape(), y.dtype(), y.device());
  agf::cuda::softmax_backward_rows(y.dtype(), grad.raw_data(), y.raw_data(), out.raw_data(), rows.count, rows.length,
                                   log, y.device().index);
  return out;
}

}  // namespace

Tensor softmax_forward(const Tensor& x) { return forward(x, false); }
Tensor softmax_backward(const Tensor& grad, const Tensor& y) { return backward(grad, y, false); }
Tensor log_softmax_forward(const Tensor& x) { return forward(x, true); }
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y) { return backward(grad, y, true); }

}  // namespace agf::ops::cuda
