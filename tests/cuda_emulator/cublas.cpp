// The part of cuBLAS that agf calls, emulated on the host: handles, and the one GEMM agf uses
// (cublasGemmStridedBatchedEx), computed naively in the compute type with the argument checks cuBLAS
// makes (leading dimensions, supported type combinations) plus one it cannot make: that each matrix lies
// inside a device allocation of the handle's device.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/cuda_emulator/device_memory.h"
#include "tests/cuda_emulator/statistics.h"

struct cublasContext {
  int device = 0;
  cudaStream_t stream = nullptr;
};

namespace {

double load(const void* base, cudaDataType type, int64_t index) {
  switch (type) {
    case CUDA_R_64F: return static_cast<const double*>(base)[index];
    case CUDA_R_32F: return static_cast<const float*>(base)[index];
    case CUDA_R_16F: return __half2float(static_cast<const __half*>(base)[index]);
    case CUDA_R_16BF: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[index]);
    default: return 0;
  }
}

void store(void* base, cudaDataType type, int64_t index, double value) {
  switch (type) {
    case CUDA_R_64F: static_cast<double*>(base)[index] = value; break;
    case CUDA_R_32F: static_cast<float*>(base)[index] = static_cast<float>(value); break;
    case CUDA_R_16F: static_cast<__half*>(base)[index] = __float2half_rn(static_cast<float>(value)); break;
    case CUDA_R_16BF: static_cast<__nv_bfloat16*>(base)[index] = __float2bfloat16_rn(static_cast<float>(value)); break;
    default: break;
  }
}

// The element types cuBLAS accepts with a compute type (those agf can ask for), and how alpha is passed.
bool supported(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute, bool& scalars_are_double) {
  scalars_are_double = compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC;
  if (a != b) return false;
  switch (compute) {
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: return a == CUDA_R_64F && c == CUDA_R_64F;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return (a == CUDA_R_32F && c == CUDA_R_32F) || (a == CUDA_R_16F && (c == CUDA_R_16F || c == CUDA_R_32F)) ||
             (a == CUDA_R_16BF && (c == CUDA_R_16BF || c == CUDA_R_32F));
    case CUBLAS_COMPUTE_32F_FAST_TF32: return a == CUDA_R_32F && c == CUDA_R_32F;
    default: return false;
  }
}

// Whether the `rows`×`cols` column-major matrices of a batch, `ld` apart, lie in device memory.
bool in_device_memory(const char* name, const void* base, cudaDataType type, int64_t rows, int64_t cols, int64_t ld,
                      int64_t stride, int64_t batch, int device) {
  if (rows == 0 || cols == 0 || batch == 0) return true;
  const int64_t element = type == CUDA_R_64F ? 8 : type == CUDA_R_32F ? 4 : 2;
  const int64_t last = (batch - 1) * stride + (cols - 1) * ld + rows;  // elements up to the last one, inclusive
  std::string why;
  if (agf::emulator::is_device_range(base, static_cast<std::size_t>(last * element), device, why)) return true;
  std::fprintf(stderr, "agf CUDA emulator: cublasGemmStridedBatchedEx: matrix %s: %s\n", name, why.c_str());
  return false;
}

// The batched product itself, accumulating in `Acc` (f64 for f64 compute; f32 for f32 compute, like the
// tensor cores' f32 accumulator), one dot product per element of C in order p = 0..k-1. op(A)'s rows and
// op(B)'s columns are first copied into contiguous `Acc` panels, so the inner loop is a plain dot product.
template <class Acc>
void multiply(bool a_plain, bool b_plain, int64_t m, int64_t n, int64_t k, double a_scale, const void* A,
              cudaDataType Atype, int64_t lda, int64_t strideA, const void* B, cudaDataType Btype, int64_t ldb,
              int64_t strideB, double c_scale, void* C, cudaDataType Ctype, int64_t ldc, int64_t strideC,
              int64_t batch) {
  std::vector<Acc> a_rows(static_cast<std::size_t>(m * k)), b_columns(static_cast<std::size_t>(n * k));
  for (int64_t entry = 0; entry < batch; ++entry) {
    const int64_t a0 = entry * strideA, b0 = entry * strideB, c0 = entry * strideC;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        a_rows[i * k + p] = static_cast<Acc>(load(A, Atype, a0 + (a_plain ? i + p * lda : p + i * lda)));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        b_columns[j * k + p] = static_cast<Acc>(load(B, Btype, b0 + (b_plain ? p + j * ldb : j + p * ldb)));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const Acc* a = a_rows.data() + i * k;
        const Acc* b = b_columns.data() + j * k;
        Acc sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += a[p] * b[p];
        const int64_t at = c0 + i + j * ldc;
        // C is not read when beta is zero (so NaN there does not leak), as in cuBLAS.
        store(C, Ctype, at, a_scale * sum + (c_scale == 0 ? 0.0 : c_scale * load(C, Ctype, at)));
      }
  }
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  auto* context = new cublasContext;
  cudaGetDevice(&context->device);
  *handle = context;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; }

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    default: return "unknown status";
  }
}

// C_i = alpha · op(A_i) · op(B_i) + beta · C_i for each batch entry i, column-major.
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batch, cublasComputeType_t compute,
                                          cublasGemmAlgo_t) {
  const bool a_plain = transa == CUBLAS_OP_N, b_plain = transb == CUBLAS_OP_N;
  const int a_rows = a_plain ? m : k, b_rows = b_plain ? k : n;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) ||
      ldc < std::max(1, m) || (transa != CUBLAS_OP_N && transa != CUBLAS_OP_T) ||
      (transb != CUBLAS_OP_N && transb != CUBLAS_OP_T))
    return CUBLAS_STATUS_INVALID_VALUE;
  bool scalars_are_double = false;
  if (!supported(Atype, Btype, Ctype, compute, scalars_are_double)) return CUBLAS_STATUS_NOT_SUPPORTED;
  int current = 0;
  cudaGetDevice(&current);
  if (current != handle->device) {
    std::fprintf(stderr, "agf CUDA emulator: a cuBLAS handle of cuda:%d used while cuda:%d is current\n",
                 handle->device, current);
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  if (!in_device_memory("A", A, Atype, a_rows, a_plain ? k : m, lda, strideA, batch, handle->device) ||
      !in_device_memory("B", B, Btype, b_rows, b_plain ? n : k, ldb, strideB, batch, handle->device) ||
      !in_device_memory("C", C, Ctype, m, n, ldc, strideC, batch, handle->device))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  const double a_scale = scalars_are_double ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  const double c_scale = scalars_are_double ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  agf::emulator::count_gemm();
  agf::emulator::DeviceAccess access(handle->device);
  if (scalars_are_double)
    multiply<double>(a_plain, b_plain, m, n, k, a_scale, A, Atype, lda, strideA, B, Btype, ldb, strideB, c_scale, C,
                     Ctype, ldc, strideC, batch);
  else
    multiply<float>(a_plain, b_plain, m, n, k, a_scale, A, Atype, lda, strideA, B, Btype, ldb, strideB, c_scale, C,
                    Ctype, ldc, strideC, batch);
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
