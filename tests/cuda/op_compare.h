#pragma once
// GPU-vs-CPU comparison of an op over the floating dtypes, for the op tests in tests/cuda/.
//
// The inputs start as f64 CPU tensors. For dtype D each is rounded to D; the GPU runs the op on the
// rounded inputs moved to the GPU (with the same views applied there, so strided and broadcast layouts
// reach the kernels), the CPU runs it on the same rounded inputs — in D for f64/f32, in f32 for f16/bf16
// (the CPU computes in f32 and f64 only), whose result is then rounded to D. A half-precision GPU kernel
// computes in f32 and rounds once, so the two differ by about one unit in the last place of D.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/random.h"
#include "tests/cuda/gpu_test.h"

namespace agf::testing {

using Tensors = std::vector<Tensor>;
using TensorsFn = std::function<Tensors(const Tensors&)>;
using OpFn = std::function<Tensor(const Tensors&)>;

inline const std::vector<DType>& floating_dtypes() {
  static const std::vector<DType> dtypes{DType::f64, DType::f32, DType::f16, DType::bf16};
  return dtypes;
}

struct Tolerance {
  double rtol;
  double atol;
};

// Pointwise results: a few ulps of D (libm vs CUDA's math library, FMA contraction on the GPU).
inline Tolerance pointwise_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64: return {1e-12, 1e-13};
    case DType::f32: return {2e-5, 2e-6};
    case DType::f16: return {2e-3, 2e-4};     // one f16 ulp is 2^-10 relative
    case DType::bf16: return {1.6e-2, 2e-3};  // one bf16 ulp is 2^-7 relative
    default: return {0, 0};
  }
}

inline Tensors identity_views(const Tensors& inputs) { return inputs; }

// Runs `op` on both devices for every dtype in `dtypes` and requires the results to agree within
// tolerance(dtype). `views` turns the (contiguous) inputs into the layouts to test, on either device.
inline void compare_with_cpu(const std::string& what, const Tensors& f64_inputs, const OpFn& op,
                             const TensorsFn& views = identity_views,
                             const std::function<Tolerance(DType)>& tolerance = pointwise_tolerance,
                             const std::vector<DType>& dtypes = floating_dtypes()) {
  for (DType dtype : dtypes) {
    const bool half = dtype == DType::f16 || dtype == DType::bf16;
    Tensors cpu_inputs, gpu_inputs;
    for (const Tensor& input : f64_inputs) {
      const Tensor rounded = input.to(dtype);
      cpu_inputs.push_back(half ? rounded.to(DType::f32) : rounded);
      gpu_inputs.push_back(rounded.to(Device::cuda()));
    }
    Tensor expected = op(views(cpu_inputs));
    if (half) expected = expected.to(dtype);
    const Tensor actual = op(views(gpu_inputs));
    const std::string label = what + " in " + std::string(dtype_name(dtype));
    INFO(label);
    REQUIRE(actual.device() == Device::cuda());
    REQUIRE(actual.dtype() == dtype);
    const Tolerance t = tolerance(dtype);
    require_close(actual, expected, t.rtol, t.atol, label.c_str());
  }
}

// A f64 CPU tensor with values uniform in [low, high).
inline Tensor random_f64(const Shape& shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Generator generator(seed);
  return uniform(shape, generator, low, high, DType::f64);
}

// A f64 CPU tensor of small integers in [low, high]: sums and products of these are exact in f32 (and,
// while small, in f16/bf16), so results can be compared exactly whatever the order of the additions.
inline Tensor random_integers(const Shape& shape, uint64_t seed, int low, int high) {
  const Tensor u = random_f64(shape, seed, 0.0, 1.0);
  std::vector<double> values = u.to_double_vector();
  for (double& v : values) v = std::floor(low + v * (high - low + 1));
  return Tensor::from_vector(values, shape, DType::f64);
}

}  // namespace agf::testing
