// Operands of matmul and the column-major GEMM plan (see matmul_plan.h).
//
// Why the swap is right. cuBLAS is column-major; agf is row-major. A row-major matrix X [R, C] with row
// stride ld occupies the same memory as the column-major matrix Xᵀ [C, R] with leading dimension ld. So
// the row-major output C [M, N] (contiguous: ld = N) is, to cuBLAS, the column-major Cᵀ [N, M] — and
// Cᵀ = Bᵀ·Aᵀ. We therefore ask for the column-major product of size N × M with inner size K, its first
// operand made from B's memory and its second from A's:
//
//   first must be Bᵀ [N, K]:   B row-major: its memory read column-major already is Bᵀ -> OP_N, ld = B's row stride
//                              B column-major (a transposed view): the memory is B [K, N] -> OP_T, ld = its column stride
//   second must be Aᵀ [K, M]:  A row-major -> OP_N;  A column-major -> OP_T   (same leading dimensions)
//
// So a row-major operand is passed as is and a column-major one with OP_T, and neither is copied. The
// leading dimensions satisfy BLAS's bounds (first: ≥ N with OP_N, ≥ K with OP_T; second: ≥ K with OP_N,
// ≥ M with OP_T) because `mappable` required the row stride of a row-major matrix to be at least its
// column count, and the column stride of a column-major one at least its row count.
//
// Batches. A strided-batched GEMM finds batch p of each operand at pointer + p·stride: one stride per
// operand. An operand whose batch axes have strides of that form (in particular all 0: one matrix shared
// by every batch) is read in place; any other is made contiguous first (copying broadcast matrices).
// When B is shared by every batch and A is row-major with its batches one after another at the row
// stride (A contiguous, say [B, T, K] @ [K, N]), the batches fold into one GEMM with batch·M rows: row r
// of batch p is row p·M + r of one [batch·M, K] matrix, and the contiguous output [batch, M, N] is the
// [batch·M, N] result.
#include "ops/matmul_plan.h"

#include <algorithm>

namespace agf::ops {

namespace {

// Whether t's batch matrices start at p·stride for every row-major batch index p (unit axes ignored);
// sets `stride` (0 when every batch axis of extent > 1 is broadcast, or there is at most one batch).
bool uniform_batch_stride(const Tensor& t, int64_t& stride) {
  int64_t inner = -1;  // the stride of the innermost batch axis of extent > 1
  int64_t extent_after = 1;
  for (int64_t axis = t.dim() - 3; axis >= 0; --axis) {
    if (t.size(axis) == 1) continue;
    if (inner < 0) inner = t.strides()[axis];
    if (t.strides()[axis] != inner * extent_after) return false;
    extent_after *= t.size(axis);
  }
  stride = inner < 0 ? 0 : inner;
  return true;
}

// `t` as a GEMM operand whose batches are one stride apart: in place when possible, else a contiguous copy.
GemmOperand batched_operand(const Tensor& t) {
  int64_t stride = 0;
  if (uniform_batch_stride(t, stride)) {
    GemmOperand operand = gemm_operand(t);
    operand.batch_stride = stride;
    return operand;
  }
  GemmOperand operand = gemm_operand(t.contiguous());  // row-major, matrices one after another
  operand.batch_stride = t.size(-2) * t.size(-1);
  return operand;
}

}  // namespace

GemmOperand gemm_operand(const Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t row_stride = t.strides()[t.dim() - 2], col_stride = t.strides()[t.dim() - 1];
  GemmOperand operand;
  operand.tensor = t;
  if ((col_stride == 1 || cols == 1) && (row_stride >= std::max<int64_t>(cols, 1) || rows == 1)) {
    operand.transpose = false;  // row-major; with one row the row stride is never used
    operand.ld = rows == 1 ? std::max<int64_t>(cols, 1) : row_stride;
  } else {
    operand.transpose = true;  // column-major: unit row stride, column stride ≥ rows (mappable)
    operand.ld = cols == 1 ? std::max<int64_t>(rows, 1) : col_stride;
  }
  return operand;
}

bool mappable(const Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t row_stride = t.strides()[t.dim() - 2], col_stride = t.strides()[t.dim() - 1];
  if (col_stride == 1 || cols == 1) return row_stride >= std::max<int64_t>(cols, 1) || rows == 1;
  if (row_stride == 1 || rows == 1) return col_stride >= std::max<int64_t>(rows, 1) || cols == 1;
  return false;
}

MatmulOperands matmul_operands(const Tensor& a_in, const Tensor& b_in) {
  AGF_CHECK(a_in.dim() >= 1 && b_in.dim() >= 1, "matmul: scalars are not matrices ({} @ {})", a_in.description(),
            b_in.description());
  // Vectors become matrices as NumPy does: a [K] -> [1, K], b [K] -> [K, 1], removed again by matmul_result.
  const Tensor a = a_in.dim() == 1 ? a_in.unsqueeze(0) : a_in;
  const Tensor b = b_in.dim() == 1 ? b_in.unsqueeze(1) : b_in;
  MatmulOperands operands;
  operands.m = a.size(-2);
  operands.k = a.size(-1);
  operands.n = b.size(-1);
  AGF_CHECK(b.size(-2) == operands.k, "matmul: inner dimensions differ: {} @ {} ({} vs {})", a_in.description(),
            b_in.description(), operands.k, b.size(-2));
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  operands.batch = broadcast_shapes(a_batch, b_batch, "matmul (batch axes)");
  Shape a_full = operands.batch, b_full = operands.batch;
  operands.out_shape = operands.batch;
  a_full.insert(a_full.end(), {operands.m, operands.k});
  b_full.insert(b_full.end(), {operands.k, operands.n});
  operands.out_shape.insert(operands.out_shape.end(), {operands.m, operands.n});
  operands.a = mappable(a) ? a.expand(a_full) : a.contiguous().expand(a_full);
  operands.b = mappable(b) ? b.expand(b_full) : b.contiguous().expand(b_full);
  return operands;
}

Tensor matmul_result(const Tensor& out, const Tensor& a_in, const Tensor& b_in) {
  if (a_in.dim() == 1 && b_in.dim() == 1) return out.reshape({});
  if (a_in.dim() == 1) return out.squeeze(-2);
  if (b_in.dim() == 1) return out.squeeze(-1);
  return out;
}

GemmPlan plan_gemm(const Tensor& a, const Tensor& b, const Tensor& out) {
  const int64_t m = out.size(-2), n = out.size(-1), k = a.size(-1);
  AGF_CHECK(m > 0 && n > 0 && k > 0 && out.is_contiguous(),
            "plan_gemm: needs a non-empty product into a contiguous output, got {} @ {} -> {}", a.description(),
            b.description(), out.description());
  const int64_t batch = out.numel() / (m * n);
  GemmPlan plan;
  plan.second = batched_operand(a);
  plan.first = batched_operand(b);
  // Column-major Cᵀ [N, M] = op(B's memory) [N, K] · op(A's memory) [K, M]  (see the top of the file).
  plan.m = n;
  plan.n = m;
  plan.k = k;
  plan.ldc = n;
  plan.c_batch_stride = m * n;
  plan.batch_count = batch;
  if (batch > 1 && plan.first.batch_stride == 0 && !plan.second.transpose &&
      plan.second.batch_stride == m * plan.second.ld) {
    plan.n = batch * m;  // one GEMM of batch·M rows of A (columns of the column-major product)
    plan.batch_count = 1;
  }
  return plan;
}

}  // namespace agf::ops
