#include "ops/cuda/id_check.h"

#include <fmt/core.h>

#include "ops/cuda/index_check_kernels.h"

namespace agf::ops::cuda {

Tensor check_indices(const Tensor& indices, const IndexRange& range, const char* op) {
  Tensor scan = Tensor::empty({2}, DType::i64, indices.device());
  const int device = indices.device().index;
  const agf::cuda::DeferredCheck check = agf::cuda::register_deferred_check(
      device,
      fmt::format("{}: {} {{value}} at {} {{position}} is outside [0, {})", op, range.what, range.where, range.upper));
  agf::cuda::scan_indices_deferred(indices.dtype(), indices.raw_data(), indices.numel(), range.upper,
                                   range.ignore.has_value(), range.ignore.value_or(0),
                                   static_cast<unsigned long long*>(scan.raw_data()), check, device);
  return scan;
}

}  // namespace agf::ops::cuda
