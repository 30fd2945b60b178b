#include "ops/cuda/id_check.h"

#include "ops/cuda/index_check_kernels.h"

namespace agf::ops::cuda {

int64_t check_indices(const Tensor& indices, const IndexRange& range, const char* op) {
  const Tensor scratch = Tensor::empty({2}, DType::i64, indices.device());
  const agf::cuda::IndexScan scan = agf::cuda::scan_indices(
      indices.dtype(), indices.raw_data(), indices.numel(), range.upper, range.ignore.has_value(),
      range.ignore.value_or(0), scratch.raw_data(), indices.device().index);
  AGF_CHECK(scan.first_invalid < 0, "{}: {} {} at {} {} is outside [0, {})", op, range.what, scan.invalid_value,
            range.where, scan.first_invalid, range.upper);
  return scan.counted;
}

}  // namespace agf::ops::cuda
