#include "ops/dropout.h"

#include "core/philox.h"
#include "core/strided_loop.h"
#include "ops/device_route.h"
#include "ops/dropout_mask.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/dropout.h"
#endif

namespace agf::ops {

namespace {
Tensor apply_mask(const Tensor& x_in, double p, uint64_t seed, uint64_t offset, const char* op) {
  check_defined(x_in, op, "x");
  check_cpu(x_in, op);
  AGF_CHECK(p >= 0.0 && p < 1.0, "{}: probability must be in [0, 1), got {}", op, p);
  const Tensor x = x_in.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    const T* in = x.data<T>();
    T* result = out.data<T>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    const float threshold = dropout_threshold(p);
    parallel_for(x.numel(), 16, [&](int64_t i) {
      const bool keep = dropout_keeps(Philox4x32::bits(seed, offset, static_cast<uint64_t>(i)), threshold);
      result[i] = keep ? in[i] * scale : T(0);
    });
  });
  return out;
}
}  // namespace

Tensor dropout_forward(const Tensor& x, double p, uint64_t seed, uint64_t offset) {
  AGF_CUDA_ROUTE(on_cuda("dropout", x), cuda::dropout_forward(x, p, seed, offset));
  return apply_mask(x, p, seed, offset, "dropout");
}

Tensor dropout_backward(const Tensor& grad, double p, uint64_t seed, uint64_t offset) {
  AGF_CUDA_ROUTE(on_cuda("dropout_backward", grad), cuda::dropout_backward(grad, p, seed, offset));
  return apply_mask(grad, p, seed, offset, "dropout_backward");
}

}  // namespace agf::ops
