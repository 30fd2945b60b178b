// Host side of the CUDA dropout: the checks of ops/cpu/dropout.cpp, a contiguous operand (element i is
// the row-major element i, as on the CPU), the launch.
#include "ops/cuda/dropout.h"

#include "core/cuda/curand_philox_mapping.h"
#include "ops/cuda/dropout_kernels.h"

namespace agf::ops::cuda {

namespace {
Tensor apply_mask(const Tensor& x_in, double p, uint64_t seed, uint64_t offset, const char* op) {
  check_defined(x_in, op, "x");
  AGF_CHECK(p >= 0.0 && p < 1.0, "{}: probability must be in [0, 1), got {}", op, p);
  AGF_CHECK(is_floating(x_in.dtype()), "{}: needs a floating-point tensor, got {}", op, x_in.description());
  agf::cuda::require_curand_philox_range(op, offset, static_cast<uint64_t>(x_in.numel()));
  const Tensor x = x_in.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  agf::cuda::dropout_apply(x.dtype(), x.raw_data(), out.raw_data(), x.numel(), p, seed, offset, x.device().index);
  return out;
}
}  // namespace

Tensor dropout_forward(const Tensor& x, double p, uint64_t seed, uint64_t offset) {
  return apply_mask(x, p, seed, offset, "dropout");
}

Tensor dropout_backward(const Tensor& grad, double p, uint64_t seed, uint64_t offset) {
  return apply_mask(grad, p, seed, offset, "dropout_backward");
}

}  // namespace agf::ops::cuda
