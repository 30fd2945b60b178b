// Matrix products: on the CPU one GEMM per batch matrix (ops/cpu/gemm.h: oneDNN, OpenBLAS or Eigen; for f32 under
// MatmulPrecision::bf16, ops/cpu/gemm_bf16.h; parallel inside for a single product, batches spread over
// threads otherwise), on a GPU cuBLAS (ops/cuda/matmul.h). Checks, 1-D promotion and batch broadcasting are
// shared (matmul_operands, ops/matmul_plan.h).
#include "ops/matmul.h"

#include <type_traits>

#include "core/strided_loop.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_bf16.h"
#include "ops/cpu/matmul_precision.h"
#include "ops/device_route.h"
#include "ops/matmul_plan.h"
#include "ops/reduce.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/matmul.h"
#endif

namespace agf::ops {

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

  const GemmOperand a_operand = gemm_operand(a_view), b_operand = gemm_operand(b_view);
  // Read here, on the calling thread (the setting is per thread): bf16 operands for f32 products only. The
  // kernel is checked before any OpenMP region (an error cannot leave one).
  const bool bf16_products = a_in.dtype() == DType::f32 && cpu::matmul_precision() == cpu::MatmulPrecision::bf16;
  const cpu::Bf16Kernel bf16_kernel = bf16_products ? cpu::bf16_kernel() : cpu::Bf16Kernel::none;
  AGF_CHECK(!bf16_products || bf16_kernel != cpu::Bf16Kernel::none, "matmul in bf16 on the CPU: {}",
            cpu::bf16_unavailable_reason());
  dispatch_floating(a_in.dtype(), "matmul", [&]<class T>() {
    const T* a_data = a_view.data<T>();
    const T* b_data = b_view.data<T>();
    T* out_data = out.data<T>();
    auto multiply = [&](int64_t index) {
      const cpu::GemmMatrix<T> a{a_data + offsets[index][0], a_operand.ld, a_operand.transpose};
      const cpu::GemmMatrix<T> b{b_data + offsets[index][1], b_operand.ld, b_operand.transpose};
      if constexpr (std::is_same_v<T, float>) {
        if (bf16_products) {
          cpu::gemm_bf16(bf16_kernel, m, n, k, a, b, out_data + offsets[index][2], n);
          return;
        }
      }
      cpu::gemm<T>(m, n, k, a, b, out_data + offsets[index][2], n);
    };
    if (batch_count == 1) {
      multiply(0);  // the GEMM parallelizes one large product itself
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
