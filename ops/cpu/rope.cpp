#include "ops/rope.h"

#include <cmath>
#include <vector>

#include "core/strided_loop.h"
#include "ops/device_route.h"
#include "ops/rope_angle.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/rope.h"
#endif

namespace agf::ops {

namespace {

// Rotates every pair of every row by `sign`·θ(t, i), on the device of x.
Tensor rotate(const Tensor& x_in, double sign, const char* op) {
  check_defined(x_in, op, "x");
  const bool gpu = on_cuda(op, x_in);
  if (!gpu) check_cpu(x_in, op);
  AGF_CHECK(x_in.dim() == 4, "{}: expects [B, H, T, dk], got {}", op, x_in.description());
  const int64_t length = x_in.size(2), dk = x_in.size(3);
  AGF_CHECK(dk % 2 == 0, "{}: the head size dk must be even to rotate feature pairs, got {}", op, dk);
  const Tensor x = x_in.contiguous();
#ifdef AGF_WITH_CUDA
  if (gpu) return cuda::rope_rotate(op, x, sign);
#endif
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  // cos and sin of θ(t, i) = t · 10000^(-2i/dk), once per (t, i), in double.
  const int64_t pairs = dk / 2;
  std::vector<double> cosine(static_cast<std::size_t>(length * pairs)), sine(cosine.size());
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t i = 0; i < pairs; ++i) {
      const double angle = rope_angle(t, i, dk);
      cosine[t * pairs + i] = std::cos(angle);
      sine[t * pairs + i] = sign * std::sin(angle);
    }
  }
  const int64_t rows = x.numel() / dk;
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    const T* in = x.data<T>();
    T* result = out.data<T>();
    parallel_for(rows, dk * 4, [&](int64_t row) {
      const int64_t t = row % length;
      const T* xr = in + row * dk;
      T* yr = result + row * dk;
      for (int64_t i = 0; i < pairs; ++i) {
        const T c = static_cast<T>(cosine[t * pairs + i]), s = static_cast<T>(sine[t * pairs + i]);
        const T even = xr[2 * i], odd = xr[2 * i + 1];
        yr[2 * i] = even * c - odd * s;
        yr[2 * i + 1] = even * s + odd * c;
      }
    });
  });
  return out;
}

}  // namespace

Tensor rope_forward(const Tensor& x) { return rotate(x, 1.0, "rope"); }

Tensor rope_backward(const Tensor& grad) { return rotate(grad, -1.0, "rope_backward"); }

}  // namespace agf::ops
