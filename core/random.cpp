#include "core/random.h"

#include <numbers>

#include "core/philox.h"
#include "core/random_values.h"
#ifdef AGF_WITH_CUDA
#include "core/cuda/curand_philox_mapping.h"
#include "core/cuda/random_kernels.h"
#include "core/cuda/strided_index_host.h"
#endif

namespace agf {

static_assert(kTwoPi == 2.0 * std::numbers::pi);

namespace {
#ifdef AGF_WITH_CUDA
// A CUDA tensor is filled in place by a kernel that computes the same element values (core/cuda/random_kernels.h)
// from cuRAND's Philox, whose positions must hold the `words` words at `offset`.
bool fill_on_cuda(Tensor& tensor, const char* op, uint64_t offset, uint64_t words) {
  if (!tensor.device().is_cuda()) return false;
  AGF_CHECK(is_floating(tensor.dtype()), "{}: needs a floating-point tensor, got {}", op, tensor.description());
  cuda::require_curand_philox_range(op, offset, words);
  return true;
}
cuda::StridedIndex<1> element_offsets(const Tensor& tensor, const char* op) {
  return cuda::make_strided_index<1>(tensor.shape(), {&tensor.strides()}, op);
}
#endif

// Writes value(element) into every element of `tensor` in row-major order.
template <class ValueOf>
void fill_with(Tensor& tensor, const char* op, ValueOf value_of) {
  check_cpu(tensor, op);
  AGF_CHECK(is_floating(tensor.dtype()), "{}: needs a floating-point tensor, got {}", op, tensor.description());
  Tensor target = tensor.is_contiguous() ? tensor : Tensor::empty(tensor.shape(), tensor.dtype());
  dispatch_all(tensor.dtype(), [&]<class T>() {
    T* out = target.data<T>();
    const int64_t count = target.numel();
#pragma omp parallel for schedule(static) if (count > 65536)
    for (int64_t i = 0; i < count; ++i) out[i] = from_double<T>(value_of(i));
  });
  if (!tensor.is_contiguous()) tensor.copy_from(target);
}
}  // namespace

void fill_uniform(Tensor& tensor, Generator& generator, double low, double high) {
  const uint64_t seed = generator.seed();
  const uint64_t offset = generator.advance(tensor.numel());
#ifdef AGF_WITH_CUDA
  if (fill_on_cuda(tensor, "fill_uniform", offset, static_cast<uint64_t>(tensor.numel()))) {
    return cuda::fill_uniform_elements(tensor.dtype(), tensor.raw_data(), element_offsets(tensor, "fill_uniform"),
                                       tensor.numel(), seed, offset, low, high, tensor.device().index);
  }
#endif
  fill_with(tensor, "fill_uniform", [&](int64_t i) {
    return uniform_value(Philox4x32::bits(seed, offset, static_cast<uint64_t>(i)), low, high);
  });
}

void fill_normal(Tensor& tensor, Generator& generator, double mean, double stddev) {
  const uint64_t seed = generator.seed();
  const uint64_t offset = generator.advance(tensor.numel() + 1);  // pairs: round up to even
#ifdef AGF_WITH_CUDA
  if (fill_on_cuda(tensor, "fill_normal", offset, static_cast<uint64_t>(tensor.numel()) + 1)) {
    return cuda::fill_normal_elements(tensor.dtype(), tensor.raw_data(), element_offsets(tensor, "fill_normal"),
                                      tensor.numel(), seed, offset, mean, stddev, tensor.device().index);
  }
#endif
  fill_with(tensor, "fill_normal", [&](int64_t i) {
    const uint64_t pair = static_cast<uint64_t>(i) & ~uint64_t{1};
    return normal_value(Philox4x32::bits(seed, offset, pair), Philox4x32::bits(seed, offset, pair + 1), i & 1, mean,
                        stddev);
  });
}

Tensor uniform(const Shape& shape, Generator& generator, double low, double high, DType dtype) {
  Tensor result = Tensor::empty(shape, dtype);
  fill_uniform(result, generator, low, high);
  return result;
}

Tensor normal(const Shape& shape, Generator& generator, double mean, double stddev, DType dtype) {
  Tensor result = Tensor::empty(shape, dtype);
  fill_normal(result, generator, mean, stddev);
  return result;
}

}  // namespace agf
