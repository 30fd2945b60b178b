#include "ops/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/strided_loop.h"
#include "ops/cpu/lane_sum.h"
#include "ops/cpu/vector_exp.h"
#include "ops/cross_entropy_row.h"
#include "ops/device_route.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/cross_entropy.h"
#endif

namespace agf::ops {

namespace {
struct Rows {
  Tensor logits;                 // contiguous [N, V]
  std::vector<int64_t> targets;  // validated
  int64_t counted = 0;           // rows not ignored
};

Rows check_rows(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options, const char* op) {
  check_defined(logits, op, "logits");
  check_defined(targets, op, "targets");
  check_cpu(logits, op);
  AGF_CHECK(logits.dim() == 2, "{}: logits must be [N, V], got {}", op, logits.description());
  AGF_CHECK(is_integer(targets.dtype()) && targets.shape() == Shape{logits.size(0)},
            "{}: targets must be integer [{}] for logits {}, got {}", op, logits.size(0), logits.description(),
            targets.description());
  AGF_CHECK(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0,
            "{}: label smoothing must be in [0, 1], got {}", op, options.label_smoothing);
  Rows rows{logits.contiguous(), targets.to_int_vector(), 0};
  const int64_t classes = logits.size(1);
  for (std::size_t r = 0; r < rows.targets.size(); ++r) {
    const int64_t y = rows.targets[r];
    if (y == options.ignore_index) continue;
    AGF_CHECK(y >= 0 && y < classes, "{}: target {} at row {} is outside [0, {})", op, y, r, classes);
    ++rows.counted;
  }
  return rows;
}

// log Σ_v exp(z_v), stably, in T (vectorized; f32 logits sum their exponentials in f32 lanes, as PyTorch does).
template <class T>
T log_sum_exp(const T* z, int64_t length) {
  const T top = cpu::row_max(z, length);
  return top + std::log(cpu::sum_exp_shifted(z, top, length));
}
}  // namespace

Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  AGF_CUDA_ROUTE(on_cuda("cross_entropy", logits, targets), cuda::cross_entropy_forward(logits, targets, options));
  const Rows rows = check_rows(logits, targets, options, "cross_entropy");
  const int64_t n = logits.size(0), classes = logits.size(1);
  const double eps = options.label_smoothing;
  double total = 0;
  dispatch_floating(logits.dtype(), "cross_entropy", [&]<class T>() {
    const T* z = rows.logits.data<T>();
#pragma omp parallel for reduction(+ : total) schedule(static) if (n * classes >= kParallelGrain)
    for (int64_t r = 0; r < n; ++r) {
      if (rows.targets[r] == options.ignore_index) continue;
      const T* row = z + r * classes;
      const double lse = log_sum_exp(row, classes);
      const double row_sum = cpu::lane_sum(classes, [row](int64_t v) { return static_cast<double>(row[v]); });
      total += smoothed_row_loss<double>(lse, row[rows.targets[r]], row_sum / static_cast<double>(classes), eps);
    }
  });
  const double loss = rows.counted ? total / static_cast<double>(rows.counted) : 0.0;
  return Tensor::full({}, loss, logits.dtype(), logits.device());
}

Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets,
                              const CrossEntropyOptions& options) {
  AGF_CUDA_ROUTE(on_cuda("cross_entropy_backward", grad, logits, targets),
                 cuda::cross_entropy_backward(grad, logits, targets, options));
  const Rows rows = check_rows(logits, targets, options, "cross_entropy_backward");
  AGF_CHECK(grad.numel() == 1, "cross_entropy_backward: grad must be a scalar, got {}", grad.description());
  const int64_t n = logits.size(0), classes = logits.size(1);
  const double eps = options.label_smoothing;
  const double scale = rows.counted ? grad.item() / static_cast<double>(rows.counted) : 0.0;
  Tensor result = Tensor::empty({n, classes}, logits.dtype(), logits.device());  // every row written below
  dispatch_floating(logits.dtype(), "cross_entropy_backward", [&]<class T>() {
    const T* z = rows.logits.data<T>();
    T* out = result.data<T>();
    parallel_for(n, classes * 4, [&](int64_t r) {
      T* g = out + r * classes;
      if (rows.targets[r] == options.ignore_index) {  // an ignored row adds nothing to the loss
        std::fill(g, g + classes, T(0));
        return;
      }
      const T* row = z + r * classes;
      const T lse = log_sum_exp(row, classes);
      const T smooth = static_cast<T>(eps / static_cast<double>(classes));
      cpu::exp_shifted(row, lse, g, classes);  // g = softmax(z)
      const T row_scale = static_cast<T>(scale);
      for (int64_t v = 0; v < classes; ++v) g[v] = row_scale * (g[v] - smooth);
      g[rows.targets[r]] -= static_cast<T>(scale * (1 - eps));
    });
  });
  return result;
}

}  // namespace agf::ops
