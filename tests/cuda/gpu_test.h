#pragma once
// Shared pieces of the GPU tests: skip (with the reason printed) when there is no usable CUDA device,
// and compare a GPU result with the CPU reference element by element.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/device.h"
#include "core/tensor.h"
#include "tests/skip.h"

// At the top of every GPU test case: skipped, never passed, when the build or the machine has no GPU.
#define AGF_REQUIRE_GPU()                                                              \
  do {                                                                                 \
    if (::agf::cuda_device_count() == 0) {                                             \
      static const std::string agf_gpu_skip_reason = ::agf::cuda_unavailable_reason(); \
      AGF_SKIP(agf_gpu_skip_reason.c_str());                                           \
    }                                                                                  \
  } while (false)

namespace agf::testing {

// Largest |gpu - cpu| / (atol/rtol scale) over all elements; REQUIREs same shape. Values are compared
// in f64 on the host: |gpu - cpu| <= atol + rtol·|cpu| must hold everywhere.
inline void require_close(const Tensor& gpu, const Tensor& cpu, double rtol, double atol, const char* what) {
  INFO(what << ": gpu " << gpu.description() << " vs cpu " << cpu.description());
  REQUIRE(gpu.shape() == cpu.shape());
  const std::vector<double> a = gpu.to(Device::cpu()).to_double_vector();
  const std::vector<double> b = cpu.to(Device::cpu()).to_double_vector();
  double worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double excess = std::abs(a[i] - b[i]) - (atol + rtol * std::abs(b[i]));
    if (!(excess <= worst)) {  // also catches NaN
      worst = std::isnan(excess) ? INFINITY : excess;
      worst_at = i;
    }
  }
  INFO("worst element " << worst_at << ": gpu " << (a.empty() ? 0 : a[worst_at]) << " cpu "
                        << (b.empty() ? 0 : b[worst_at]));
  CHECK(worst <= 0);
}

}  // namespace agf::testing
