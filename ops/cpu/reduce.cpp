// Reductions. The reduced axes are moved last (a view), made contiguous (a copy only when needed), and
// each output element reduces one contiguous row — one loop for sum, mean and max. On the CPU, a contiguous
// tensor reduced over its leading axes (a bias gradient) is summed down its columns instead, with no copy.
// Tensors on a GPU take the same plan and hand the rows to the CUDA row reduction (ops/cuda/reduce.h).
#include "ops/reduce.h"

#include <omp.h>

#include <algorithm>
#include <limits>

#include "core/strided_loop.h"
#include "ops/device_route.h"
#include "ops/elementwise.h"
#include "ops/elementwise_functors.h"
#include "ops/map_elements.h"
#include "ops/reduce_kind.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/reduce.h"
#endif

namespace agf::ops {

namespace {

struct ReductionPlan {
  std::vector<bool> reduced;  // per input axis
  Shape kept_shape;           // output shape with keepdim = true (1 on reduced axes)
  Shape output_shape;         // the shape returned (keepdim applied)
  int64_t reduced_count = 1;  // elements per output
};

ReductionPlan plan_reduction(const Shape& shape, const Axes& axes, bool keepdim, const char* op) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  ReductionPlan plan;
  plan.reduced.assign(rank, axes.empty());
  for (int64_t axis : axes) {
    const int64_t normalized = normalize_axis(axis, rank, op);
    AGF_CHECK(!plan.reduced[normalized], "{}: axis {} listed twice", op, axis);
    plan.reduced[normalized] = true;
  }
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (plan.reduced[axis]) {
      plan.reduced_count *= shape[axis];
      plan.kept_shape.push_back(1);
      if (keepdim) plan.output_shape.push_back(1);
    } else {
      plan.kept_shape.push_back(shape[axis]);
      plan.output_shape.push_back(shape[axis]);
    }
  }
  return plan;
}

// Whether `x` is contiguous and its reduced axes are exactly its leading ones (at least one kept): the
// gradient of a broadcast bias, [rows, columns] summed to [columns]. Then each output is a column.
bool reduces_leading_axes(const ReductionPlan& plan, const Tensor& x) {
  if (!x.is_contiguous() || x.numel() == 0) return false;
  const auto first_kept = std::find(plan.reduced.begin(), plan.reduced.end(), false);
  return first_kept != plan.reduced.begin() && first_kept != plan.reduced.end() &&
         std::find(first_kept, plan.reduced.end(), true) == plan.reduced.end();
}

// The reduction of reduces_leading_axes in place, without moving the reduced axes last (a transposing copy):
// accumulators for a block of columns walk down the rows, in the same order (row 0, 1, ...) as the row loop,
// so the results are the same bit for bit; the loop over a block of columns vectorizes.
template <class Combine, class Finish>
Tensor reduce_columns(const Tensor& x, const ReductionPlan& plan, const char* op, double initial, Combine combine,
                      Finish finish) {
  const int64_t rows = plan.reduced_count, columns = x.numel() / rows;
  constexpr int64_t kBlock = 256;  // at most this many columns per task: accumulators that stay in L1
  // at least one task per thread when there are enough columns, in whole vectors of 16
  const int64_t threads = omp_get_max_threads();
  const int64_t block = std::clamp<int64_t>(((columns + threads - 1) / threads + 15) & ~int64_t{15}, 16, kBlock);
  Tensor out = Tensor::empty(plan.output_shape, x.dtype(), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    const T* in = x.data<T>();
    T* result = out.data<T>();
    parallel_for((columns + block - 1) / block, rows * block, [&](int64_t task) {
      const int64_t begin = task * block, width = std::min(block, columns - begin);
      double accumulator[kBlock];
      std::fill(accumulator, accumulator + width, initial);
      for (int64_t r = 0; r < rows; ++r) {
        const T* values = in + r * columns + begin;
        for (int64_t c = 0; c < width; ++c) accumulator[c] = combine(accumulator[c], static_cast<double>(values[c]));
      }
      for (int64_t c = 0; c < width; ++c) result[begin + c] = static_cast<T>(finish(accumulator[c], rows));
    });
  });
  return out;
}

// Reduces rows of `x` (reduced axes moved last) with `combine(accumulator, value)` from `initial`, then
// `finish(accumulator, count)`. Accumulation is in double for both f32 and f64. On a GPU the rows go to
// the CUDA reduction of the same `kind` instead (accumulating in f32, or f64 for f64).
template <class Combine, class Finish>
Tensor reduce_rows(const Tensor& x, const Axes& axes, bool keepdim, const char* op, ReduceKind kind, double initial,
                   Combine combine, Finish finish) {
  check_defined(x, op, "x");
  const bool gpu = on_cuda(op, x);
  if (!gpu) check_cpu(x, op);
  const ReductionPlan plan = plan_reduction(x.shape(), axes, keepdim, op);
  std::vector<int64_t> order;
  for (int64_t axis = 0; axis < x.dim(); ++axis)
    if (!plan.reduced[axis]) order.push_back(axis);
  for (int64_t axis = 0; axis < x.dim(); ++axis)
    if (plan.reduced[axis]) order.push_back(axis);
  const int64_t row_length = plan.reduced_count;
  if (!gpu && reduces_leading_axes(plan, x)) {
    return reduce_columns(x, plan, op, initial, combine, finish);
  }
  const Tensor rows = x.permute(order).contiguous();
  const int64_t row_count = row_length == 0 ? shape_numel(plan.output_shape) : x.numel() / row_length;
  Tensor out = Tensor::empty(plan.output_shape, x.dtype(), x.device());
#ifdef AGF_WITH_CUDA
  if (gpu) {
    cuda::reduce_rows(op, kind, rows, out, row_count, row_length);
    return out;
  }
#endif
  (void)kind;
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    const T* in = rows.data<T>();
    T* result = out.data<T>();
    parallel_for(row_count, row_length, [&](int64_t row) {
      double accumulator = initial;
      const T* values = in + row * row_length;
      for (int64_t i = 0; i < row_length; ++i) accumulator = combine(accumulator, static_cast<double>(values[i]));
      result[row] = static_cast<T>(finish(accumulator, row_length));
    });
  });
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, const Axes& axes, bool keepdim) {
  return reduce_rows(
      x, axes, keepdim, "sum", ReduceKind::sum, 0.0, [](double a, double v) { return a + v; },
      [](double a, int64_t) { return a; });
}

Tensor mean(const Tensor& x, const Axes& axes, bool keepdim) {
  return reduce_rows(
      x, axes, keepdim, "mean", ReduceKind::mean, 0.0, [](double a, double v) { return a + v; },
      [](double a, int64_t n) { return n ? a / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN(); });
}

Tensor max(const Tensor& x, const Axes& axes, bool keepdim) {
  AGF_CHECK(x.numel() > 0, "max: reduction of an empty tensor {}", x.description());
  return reduce_rows(
      x, axes, keepdim, "max", ReduceKind::max, -std::numeric_limits<double>::infinity(),
      [](double a, double v) { return std::max(a, v); }, [](double a, int64_t) { return a; });
}

Tensor sum_backward(const Tensor& grad, const Shape& x_shape, const Axes& axes, bool keepdim) {
  const ReductionPlan plan = plan_reduction(x_shape, axes, keepdim, "sum_backward");
  return grad.reshape(plan.kept_shape).expand(x_shape).contiguous();
}

Tensor mean_backward(const Tensor& grad, const Shape& x_shape, const Axes& axes, bool keepdim) {
  const ReductionPlan plan = plan_reduction(x_shape, axes, keepdim, "mean_backward");
  return mul_scalar(grad.reshape(plan.kept_shape).expand(x_shape), 1.0 / static_cast<double>(plan.reduced_count));
}

Tensor max_backward(const Tensor& grad, const Tensor& x, const Tensor& y, const Axes& axes, bool keepdim) {
  const ReductionPlan plan = plan_reduction(x.shape(), axes, keepdim, "max_backward");
  const Tensor y_kept = y.reshape(plan.kept_shape);
  const Tensor is_max = map_elements("max_backward", functors::IsMax{}, x, y_kept);  // [x == max]
  const Tensor ties = sum(is_max, axes, true);
  return map_elements("max_backward", functors::ShareAmongTies{}, is_max, grad.reshape(plan.kept_shape), ties);
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  AGF_CHECK(lead >= 0, "sum_to: cannot reduce {} to the larger rank of {}", grad.description(), shape_string(shape));
  Axes axes;
  for (int64_t axis = 0; axis < grad.dim(); ++axis) {
    if (axis < lead) {
      axes.push_back(axis);
    } else if (shape[axis - lead] == 1 && grad.size(axis) != 1) {
      axes.push_back(axis);
    } else {
      AGF_CHECK(shape[axis - lead] == grad.size(axis), "sum_to: {} does not broadcast to {}", shape_string(shape),
                grad.description());
    }
  }
  if (axes.empty()) return grad.reshape(shape);
  return sum(grad, axes, true).reshape(shape);
}

}  // namespace agf::ops
