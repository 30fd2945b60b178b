// Matrix products: on the CPU with Eigen's GEMM (OpenMP-parallel inside for large single products), on a
// GPU with cuBLAS (ops/cuda/matmul.h). Checks, 1-D promotion and batch broadcasting are shared
// (matmul_operands, ops/matmul_plan.h).
#include "ops/matmul.h"

#include <Eigen/Core>
#include <variant>

#include "core/strided_loop.h"
#include "ops/device_route.h"
#include "ops/matmul_plan.h"
#include "ops/reduce.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/matmul.h"
#endif

namespace agf::ops {

namespace {

// A 2-D strided slice seen by Eigen without copying: row-major when the last axis is unit-stride,
// column-major when the second-to-last is (a transposed view). One variant, so the GEMM is written once.
template <class T>
using RowMajorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0, Eigen::OuterStride<>>;
template <class T>
using ColMajorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>, 0, Eigen::OuterStride<>>;
template <class T>
using MatrixMap = std::variant<RowMajorMap<T>, ColMajorMap<T>>;

template <class T>
MatrixMap<T> map_matrix(const T* data, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  if (col_stride == 1 || cols == 1) {
    return RowMajorMap<T>(data, rows, cols, Eigen::OuterStride<>(std::max<int64_t>(row_stride, cols)));
  }
  return ColMajorMap<T>(data, rows, cols, Eigen::OuterStride<>(std::max<int64_t>(col_stride, rows)));
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  check_defined(a_in, "matmul", "a");
  check_defined(b_in, "matmul", "b");
  check_same_device(a_in, b_in, "matmul");
  check_same_dtype(a_in, b_in, "matmul");
  const bool gpu = on_cuda("matmul", a_in, b_in);
  if (!gpu) check_cpu(a_in, "matmul");
  const MatmulOperands operands = matmul_operands(a_in, b_in);
  const Tensor& a_view = operands.a;
  const Tensor& b_view = operands.b;
  const int64_t m = operands.m, k = operands.k, n = operands.n;
  Tensor out = Tensor::empty(operands.out_shape, a_in.dtype(), a_in.device());
  if (gpu) {
#ifdef AGF_WITH_CUDA
    cuda::batched_gemm(a_view, b_view, out);
#endif
    return matmul_result(out, a_in, b_in);
  }
  const int64_t batch_count = shape_numel(operands.batch);
  // Offsets of every batch matrix: walk the batch axes of the three operands together.
  std::vector<std::array<int64_t, 3>> offsets;
  offsets.reserve(batch_count);
  const Strides a_strides(a_view.strides().begin(), a_view.strides().end() - 2);
  const Strides b_strides(b_view.strides().begin(), b_view.strides().end() - 2);
  const Strides out_strides(out.strides().begin(), out.strides().end() - 2);
  for_each_strided<3>(operands.batch, {&a_strides, &b_strides, &out_strides},
                      [&](const std::array<int64_t, 3>& at) { offsets.push_back(at); });

  dispatch_floating(a_in.dtype(), "matmul", [&]<class T>() {
    const T* a_data = a_view.data<T>();
    const T* b_data = b_view.data<T>();
    T* out_data = out.data<T>();
    const int64_t ars = a_view.strides()[a_view.dim() - 2], acs = a_view.strides()[a_view.dim() - 1];
    const int64_t brs = b_view.strides()[b_view.dim() - 2], bcs = b_view.strides()[b_view.dim() - 1];
    auto multiply = [&](int64_t index) {
      using Output = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
      Output c(out_data + offsets[index][2], m, n);
      const MatrixMap<T> lhs = map_matrix(a_data + offsets[index][0], m, k, ars, acs);
      const MatrixMap<T> rhs = map_matrix(b_data + offsets[index][1], k, n, brs, bcs);
      std::visit([&](const auto& left, const auto& right) { c.noalias() = left * right; }, lhs, rhs);
    };
    if (batch_count == 1) {
      multiply(0);  // Eigen parallelizes one large product itself
    } else {
      parallel_for(batch_count, m * n * k, multiply);
    }
  });
  return matmul_result(out, a_in, b_in);
}

std::pair<Tensor, Tensor> matmul_backward(const Tensor& grad, const Tensor& a_in, const Tensor& b_in) {
  const Tensor a = a_in.dim() == 1 ? a_in.unsqueeze(0) : a_in;
  const Tensor b = b_in.dim() == 1 ? b_in.unsqueeze(1) : b_in;
  // The gradient of the promoted product: b's unit axis restored first, so that [K] @ [K] (a rank-0
  // gradient) becomes [1] and then [1, 1].
  Tensor g = grad;
  if (b_in.dim() == 1) g = g.unsqueeze(-1);
  if (a_in.dim() == 1) g = g.unsqueeze(-2);
  Tensor grad_a = sum_to(matmul(g, b.transpose(-1, -2)), a.shape());  // G·Bᵀ
  Tensor grad_b = sum_to(matmul(a.transpose(-1, -2), g), b.shape());  // Aᵀ·G
  return {grad_a.reshape(a_in.shape()), grad_b.reshape(b_in.shape())};
}

}  // namespace agf::ops
