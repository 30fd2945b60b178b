#include "ops/dropout.h"

#include <algorithm>

#include "core/philox_stream.h"
#include "core/strided_loop.h"
#include "ops/device_route.h"
#include "ops/dropout_mask.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/dropout.h"
#endif

namespace agf::ops {

namespace {
constexpr int64_t kChunk = 64 * PhiloxStream::kWords;  // elements per parallel task

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
    // Chunks of whole Philox batches, one run of the stream each.
    const PhiloxStream stream(seed, offset);
    const int64_t chunks = (x.numel() + kChunk - 1) / kChunk;
    parallel_for(chunks, 16 * kChunk, [&](int64_t chunk) {
      const int64_t first = chunk * kChunk;
      // Written so that the loop over a batch of words vectorizes: the pointers by value (by reference they are
      // reloaded after every store), and the product outside the select (GCC does not compute a multiply the
      // source makes conditional, as it might raise a floating-point exception; a branch per element stays).
      // Equal to keeps ? in[i]·scale : 0, as 0·scale = 0.
      stream.for_each(static_cast<uint64_t>(first), std::min(kChunk, x.numel() - first),
                      [in, result, scale, threshold](uint64_t i, uint32_t bits) {
                        result[i] = (dropout_keeps(bits, threshold) ? in[i] : T(0)) * scale;
                      });
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
