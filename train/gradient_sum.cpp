#include "train/gradient_sum.h"

#include <chrono>
#include <cstring>

namespace agf::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The dtype a parameter's gradient has, or would have (mixed precision sums half parameters' gradients in f32).
DType gradient_dtype(const Variable& parameter) {
  if (parameter.grad().defined()) return parameter.grad().dtype();
  return parameter.state()->grad_dtype.value_or(parameter.dtype());
}

// Consecutive parameters with one gradient dtype and device, at most `bucket_bytes` of gradients together
// unless one alone is larger: [first, last).
struct Bucket {
  std::size_t first = 0, last = 0;
  int64_t elements = 0;
  DType dtype = DType::f32;
  Device device = Device::cpu();
};

std::vector<Bucket> make_buckets(const std::vector<std::pair<std::string, Variable>>& parameters,
                                 int64_t bucket_bytes) {
  std::vector<Bucket> buckets;
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    const Variable& parameter = parameters[p].second;
    const DType dtype = gradient_dtype(parameter);
    const Device device = parameter.data().device();
    const int64_t bytes = parameter.data().numel() * static_cast<int64_t>(dtype_size(dtype));
    if (buckets.empty() || buckets.back().dtype != dtype || buckets.back().device != device ||
        (buckets.back().elements * static_cast<int64_t>(dtype_size(dtype)) + bytes > bucket_bytes)) {
      buckets.push_back({.first = p, .last = p, .elements = 0, .dtype = dtype, .device = device});
    }
    buckets.back().last = p + 1;
    buckets.back().elements += parameter.data().numel();
  }
  return buckets;
}

// part ← gradient (or zeros where there is none); `part` is a contiguous slice of a bucket.
void copy_gradient(Tensor part, const Variable& parameter) {
  const Tensor& grad = parameter.grad();
  if (part.device().is_cpu()) {
    if (!grad.defined()) {
      std::memset(part.raw_data(), 0, static_cast<std::size_t>(part.numel()) * dtype_size(part.dtype()));
      return;
    }
    if (grad.device().is_cpu() && grad.dtype() == part.dtype()) {
      const Tensor source = grad.contiguous();
      std::memcpy(part.raw_data(), source.raw_data(),
                  static_cast<std::size_t>(part.numel()) * dtype_size(part.dtype()));
      return;
    }
  }
  if (!grad.defined()) {
    part.fill(0);
    return;
  }
  Tensor shaped = part.view(grad.shape());
  shaped.copy_from(grad);
}

}  // namespace

GradientSumTiming sum_gradients(World& world, const std::vector<std::pair<std::string, Variable>>& parameters,
                                int64_t bucket_bytes) {
  GradientSumTiming timing;
  if (world.size() == 1) return timing;
  const auto start = Clock::now();
  for (const Bucket& bucket : make_buckets(parameters, bucket_bytes)) {
    const auto count = static_cast<int64_t>(bucket.last - bucket.first);
    // [gradients of the bucket's parameters | one "has a gradient" flag per parameter]
    Tensor flat = Tensor::empty({bucket.elements + count}, bucket.dtype, bucket.device);
    std::vector<double> has_gradient;
    int64_t offset = 0;
    for (std::size_t p = bucket.first; p < bucket.last; ++p) {
      const Variable& parameter = parameters[p].second;
      const int64_t numel = parameter.data().numel();
      copy_gradient(flat.slice(0, offset, offset + numel), parameter);
      has_gradient.push_back(parameter.grad().defined() ? 1 : 0);
      offset += numel;
    }
    Tensor flags = flat.slice(0, offset, offset + count);
    flags.copy_from(Tensor::from_vector(has_gradient, {count}, bucket.dtype));

    const auto communication_start = Clock::now();
    world.sum(flat);
    timing.communication_seconds += seconds_since(communication_start);
    timing.buckets += 1;
    timing.bytes += flat.numel() * static_cast<int64_t>(dtype_size(bucket.dtype));

    const std::vector<double> summed_flags = flags.to(Device::cpu()).to_double_vector();
    offset = 0;
    for (std::size_t p = bucket.first; p < bucket.last; ++p) {
      const Variable& parameter = parameters[p].second;
      const int64_t numel = parameter.data().numel();
      if (summed_flags[p - bucket.first] > 0) {
        parameter.set_grad(flat.slice(0, offset, offset + numel).view(parameter.shape()));
      } else {
        parameter.zero_grad();
      }
      offset += numel;
    }
  }
  timing.seconds = seconds_since(start);
  return timing;
}

}  // namespace agf::train
