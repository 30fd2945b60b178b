#include "core/random.h"

#include <cmath>
#include <numbers>

#include "core/philox.h"

namespace agf {

namespace {
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
  fill_with(tensor, "fill_uniform", [&](int64_t i) {
    return low + (high - low) * uniform_from_bits(Philox4x32::bits(seed, offset, static_cast<uint64_t>(i)));
  });
}

void fill_normal(Tensor& tensor, Generator& generator, double mean, double stddev) {
  const uint64_t seed = generator.seed();
  const uint64_t offset = generator.advance(tensor.numel() + 1);  // pairs: round up to even
  fill_with(tensor, "fill_normal", [&](int64_t i) {
    const uint64_t pair = static_cast<uint64_t>(i) & ~uint64_t{1};
    const double u1 = open_uniform_from_bits(Philox4x32::bits(seed, offset, pair));
    const double u2 = open_uniform_from_bits(Philox4x32::bits(seed, offset, pair + 1));
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    return mean + stddev * radius * ((i & 1) ? std::sin(angle) : std::cos(angle));
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
