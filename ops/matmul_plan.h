#pragma once
// The device-independent parts of matmul (ops/matmul.h):
//
// - matmul_operands: checks, NumPy's 1-D promotion and batch broadcasting, and the operands as strided
//   views whose last two axes are row- or column-major (one contiguous copy otherwise) — shared by the
//   CPU (Eigen) and GPU (cuBLAS) paths;
// - plan_gemm: how those row-major operands become one column-major strided-batched GEMM, the call the
//   GPU path makes to cuBLAS (cublasGemmStridedBatchedEx). It is plain tensor metadata, so the CPU tests
//   check it against a reference column-major GEMM (tests/ops/test_gemm_plan.cpp) on any machine.
#include "core/tensor.h"

namespace agf::ops {

// Whether the last two axes of `t` can be read in place: row-major (unit column stride) or column-major
// (unit row stride, a transposed view), with the other stride at least the extent it steps over.
bool mappable(const Tensor& t);

struct MatmulOperands {
  Tensor a;         // [batch..., M, K]: expanded to the broadcast batch axes, last two axes mappable
  Tensor b;         // [batch..., K, N]: likewise
  Shape batch;      // the broadcast batch axes
  Shape out_shape;  // batch + [M, N]
  int64_t m = 0, k = 0, n = 0;
};

// a_in [..., M, K] @ b_in [..., K, N] (a vector a [K] is [1, K], a vector b [K] is [K, 1]). Checks the ranks
// and the inner dimensions; the caller has checked devices and dtypes.
MatmulOperands matmul_operands(const Tensor& a_in, const Tensor& b_in);

// Removes the unit axes that 1-D promotion added: [K] @ [K] -> [], [K] @ [.., K, N] -> [.., N], and
// [.., M, K] @ [K] -> [.., M].
Tensor matmul_result(const Tensor& out, const Tensor& a_in, const Tensor& b_in);

// One operand of a column-major GEMM.
struct GemmOperand {
  Tensor tensor;             // the memory read: the operand itself, or a contiguous copy of it
  bool transpose = false;    // OP_T: the row-major matrix is stored column-major (a transposed view)
  int64_t ld = 1;            // leading dimension: the row stride (OP_N) or the column stride (OP_T)
  int64_t batch_stride = 0;  // elements from one batch's matrix to the next (0: shared by all batches)
};

// The last two axes of a mappable `t` [..., R, C] as one operand of a GEMM that reads it in place: a row-major
// matrix (transpose = false, ld = its row stride) or a column-major one (transpose = true, ld = its column
// stride), with a unit axis read whichever way keeps ld within BLAS's bounds. The batch stride is left 0.
// This is the row-major BLAS operand as it stands (ops/cpu/gemm.h) and, swapped, cuBLAS's (plan_gemm).
GemmOperand gemm_operand(const Tensor& t);

// For batch p < batch_count, column-major:  C_p [m, n] = op(first_p) [m, k] · op(second_p) [k, n], with
// C_p at out + p·c_batch_stride, leading dimension ldc. (BLAS's A, B and C, in that order.)
struct GemmPlan {
  GemmOperand first;   // made from the row-major B
  GemmOperand second;  // made from the row-major A
  int64_t m = 0, n = 0, k = 0;
  int64_t ldc = 1;
  int64_t c_batch_stride = 0;
  int64_t batch_count = 0;
};

// out [..., M, N] = a [..., M, K] @ b [..., K, N] where a and b come from matmul_operands and out is
// contiguous, with M, N, K > 0 (the caller handles empty products). See matmul_plan.cpp for why the
// row-major product is the column-major one of the swapped operands.
GemmPlan plan_gemm(const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace agf::ops
