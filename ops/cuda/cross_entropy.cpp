// Host side of the CUDA cross-entropy: the checks of ops/cpu/cross_entropy.cpp (targets checked on the GPU,
// reported at the next synchronisation: ops/cuda/id_check.h), contiguous operands, the launches.
#include "ops/cuda/cross_entropy.h"

#include "ops/cuda/cross_entropy_kernels.h"
#include "ops/cuda/id_check.h"

namespace agf::ops::cuda {

namespace {
struct Rows {
  Tensor logits;   // contiguous [N, V]
  Tensor targets;  // contiguous [N], checked by a deferred scan
  Tensor scan;     // the scan's device words: counted_on_device(scan) = rows not ignored
};

Rows check_rows(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options, const char* op) {
  check_defined(logits, op, "logits");
  check_defined(targets, op, "targets");
  AGF_CHECK(logits.dim() == 2, "{}: logits must be [N, V], got {}", op, logits.description());
  AGF_CHECK(is_floating(logits.dtype()), "{}: logits must be floating-point, got {}", op, logits.description());
  AGF_CHECK(is_integer(targets.dtype()) && targets.shape() == Shape{logits.size(0)},
            "{}: targets must be integer [{}] for logits {}, got {}", op, logits.size(0), logits.description(),
            targets.description());
  AGF_CHECK(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0,
            "{}: label smoothing must be in [0, 1], got {}", op, options.label_smoothing);
  Rows rows{logits.contiguous(), targets.contiguous(), Tensor()};
  IndexRange range;
  range.upper = logits.size(1);
  range.ignore = options.ignore_index;
  range.what = "target";
  range.where = "row";
  rows.scan = check_indices(rows.targets, range, op);
  return rows;
}
}  // namespace

Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  const Rows rows = check_rows(logits, targets, options, "cross_entropy");
  const Device device = logits.device();
  const int64_t n = logits.size(0), classes = logits.size(1);
  Tensor loss = Tensor::empty({}, logits.dtype(), device);
  const Tensor row_losses = Tensor::empty({n}, DType::f64, device);
  agf::cuda::cross_entropy_loss(logits.dtype(), rows.logits.raw_data(), rows.targets.dtype(), rows.targets.raw_data(),
                                loss.raw_data(), static_cast<double*>(row_losses.raw_data()), n, classes,
                                options.ignore_index, options.label_smoothing, counted_on_device(rows.scan),
                                device.index);
  return loss;
}

Tensor cross_entropy_backward(const Tensor& grad_in, const Tensor& logits, const Tensor& targets,
                              const CrossEntropyOptions& options) {
  const Rows rows = check_rows(logits, targets, options, "cross_entropy_backward");
  check_defined(grad_in, "cross_entropy_backward", "grad");
  AGF_CHECK(grad_in.numel() == 1, "cross_entropy_backward: grad must be a scalar, got {}", grad_in.description());
  const Device device = logits.device();
  const int64_t n = logits.size(0), classes = logits.size(1);
  // Ignored rows (all of them when none is counted: the CPU's scale is then 0) get zero gradients.
  // The scalar g is read by the kernel on the device (no host round trip), in the logits' dtype.
  const Tensor grad = grad_in.to(logits.dtype()).contiguous();
  Tensor result = Tensor::empty({n, classes}, logits.dtype(), device);
  agf::cuda::cross_entropy_backward(logits.dtype(), grad.raw_data(), rows.logits.raw_data(), rows.targets.dtype(),
                                    rows.targets.raw_data(), result.raw_data(), n, classes, options.ignore_index,
                                    options.label_smoothing, counted_on_device(rows.scan), device.index);
  return result;
}

}  // namespace agf::ops::cuda
