// cuBLAS GEMMs for agf's row-major tensors (see matmul.h; the layout of the call is plan_gemm's,
// ops/matmul_plan.cpp, checked on the CPU by tests/ops/test_gemm_plan.cpp).
#include "ops/cuda/matmul.h"

#include <climits>

#include "core/cuda/runtime.h"
#include "ops/matmul_plan.h"

namespace agf::ops::cuda {

namespace {

struct GemmTypes {
  cudaDataType data;
  cublasComputeType_t compute;
};

GemmTypes gemm_types(DType dtype) {
  switch (dtype) {
    case DType::f64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case DType::f32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F};  // full f32: TF32 only if asked for
    case DType::f16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F};  // tensor cores, f32 accumulation
    case DType::bf16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    default: fail("matmul: dtype {} is not a floating type", dtype_name(dtype));
  }
}

cublasOperation_t operation(const GemmOperand& operand) { return operand.transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

// cuBLAS takes sizes and leading dimensions as int.
int as_int(int64_t value, const char* what, const Tensor& a, const Tensor& b) {
  AGF_CHECK(value <= INT_MAX, "matmul: {} = {} exceeds what one cuBLAS call takes ({} @ {})", what, value,
            a.description(), b.description());
  return static_cast<int>(value);
}

}  // namespace

void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out) {
  const GemmTypes types = gemm_types(a.dtype());
  if (out.numel() == 0) return;
  if (a.size(-1) == 0) {  // K = 0: every element is an empty sum
    Tensor zeros = out;   // a view of the same storage
    zeros.fill(0.0);
    return;
  }
  const GemmPlan plan = plan_gemm(a, b, out);
  const int device = out.device().index;
  ::agf::cuda::DeviceGuard guard(device);
  const double alpha64 = 1, beta64 = 0;
  const float alpha32 = 1, beta32 = 0;  // the scale type is the compute type: f32 for f32/f16/bf16
  const bool f64 = a.dtype() == DType::f64;
  AGF_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      ::agf::cuda::cublas_handle(device), operation(plan.first), operation(plan.second), as_int(plan.m, "N", a, b),
      as_int(plan.n, "M (times the folded batch)", a, b), as_int(plan.k, "K", a, b),
      f64 ? static_cast<const void*>(&alpha64) : static_cast<const void*>(&alpha32), plan.first.tensor.raw_data(),
      types.data, as_int(plan.first.ld, "B's leading dimension", a, b), static_cast<long long>(plan.first.batch_stride),
      plan.second.tensor.raw_data(), types.data, as_int(plan.second.ld, "A's leading dimension", a, b),
      static_cast<long long>(plan.second.batch_stride),
      f64 ? static_cast<const void*>(&beta64) : static_cast<const void*>(&beta32), out.raw_data(), types.data,
      as_int(plan.ldc, "N", a, b), static_cast<long long>(plan.c_batch_stride),
      as_int(plan.batch_count, "the batch count", a, b), types.compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace agf::ops::cuda
