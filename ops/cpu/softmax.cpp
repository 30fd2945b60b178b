#include "ops/softmax.h"

#include <cmath>

#include "core/strided_loop.h"
#include "ops/cpu/vector_exp.h"
#include "ops/device_route.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/softmax.h"
#endif

namespace agf::ops {

namespace {

// Runs body(in_row, out_row, grad_row_or_null, length) over contiguous last-axis rows.
template <class Body>
Tensor for_each_row(const char* op, const Tensor& x, const Tensor* second, Body body) {
  check_defined(x, op, "x");
  check_cpu(x, op);
  AGF_CHECK(x.dim() >= 1, "{}: needs at least one axis, got {}", op, x.description());
  if (second) {
    AGF_CHECK(second->shape() == x.shape(), "{}: shapes differ ({} vs {})", op, x.description(), second->description());
    check_same_dtype(x, *second, op);
  }
  const Tensor in = x.contiguous();
  const Tensor other = second ? second->contiguous() : Tensor();
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  const int64_t length = x.size(-1);
  const int64_t rows = length ? x.numel() / length : 0;
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    const T* in_data = in.data<T>();
    const T* other_data = second ? other.data<T>() : nullptr;
    T* out_data = out.data<T>();
    parallel_for(rows, length * 8, [&](int64_t row) {
      body(in_data + row * length, other_data ? other_data + row * length : nullptr, out_data + row * length, length);
    });
  });
  return out;
}

}  // namespace

Tensor softmax_forward(const Tensor& x) {
  AGF_CUDA_ROUTE(on_cuda("softmax", x), cuda::softmax_forward(x));
  return for_each_row("softmax", x, nullptr, [](const auto* in, const auto*, auto* out, int64_t length) {
    using T = std::remove_cvref_t<decltype(*in)>;
    const T total = cpu::exp_shifted(in, cpu::row_max(in, length), out, length);
    const T scale = T(1) / total;
    for (int64_t i = 0; i < length; ++i) out[i] *= scale;
  });
}

Tensor softmax_backward(const Tensor& grad, const Tensor& y) {
  AGF_CUDA_ROUTE(on_cuda("softmax_backward", grad, y), cuda::softmax_backward(grad, y));
  return for_each_row("softmax_backward", y, &grad, [](const auto* yv, const auto* g, auto* out, int64_t length) {
    using T = std::remove_cvref_t<decltype(*yv)>;
    T dot = 0;
    for (int64_t i = 0; i < length; ++i) dot += g[i] * yv[i];
    for (int64_t i = 0; i < length; ++i) out[i] = yv[i] * (g[i] - dot);
  });
}

Tensor log_softmax_forward(const Tensor& x) {
  AGF_CUDA_ROUTE(on_cuda("log_softmax", x), cuda::log_softmax_forward(x));
  return for_each_row("log_softmax", x, nullptr, [](const auto* in, const auto*, auto* out, int64_t length) {
    using T = std::remove_cvref_t<decltype(*in)>;
    const T top = cpu::row_max(in, length);
    const T log_total = top + std::log(cpu::sum_exp_shifted(in, top, length));
    for (int64_t i = 0; i < length; ++i) out[i] = in[i] - log_total;
  });
}

Tensor log_softmax_backward(const Tensor& grad, const Tensor& y) {
  AGF_CUDA_ROUTE(on_cuda("log_softmax_backward", grad, y), cuda::log_softmax_backward(grad, y));
  return for_each_row("log_softmax_backward", y, &grad, [](const auto* yv, const auto* g, auto* out, int64_t length) {
    using T = std::remove_cvref_t<decltype(*yv)>;
    T total = 0;
    for (int64_t i = 0; i < length; ++i) total += g[i];
    cpu::exp_shifted(yv, T(0), out, length);  // out = exp(y) = softmax(x)
    for (int64_t i = 0; i < length; ++i) out[i] = g[i] - out[i] * total;
  });
}

}  // namespace agf::ops
