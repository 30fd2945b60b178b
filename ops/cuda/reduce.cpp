// The passes of a row reduction on a GPU (see reduce.h and reduce_kernels.h).
#include "ops/cuda/reduce.h"

#include "ops/cuda/reduce_kernels.h"

namespace agf::ops::cuda {

void reduce_rows(const char* op, ReduceKind kind, const Tensor& in, const Tensor& out, int64_t rows, int64_t length) {
  dispatch_any_floating(in.dtype(), op, []<class T>() {});  // integer tensors: an error naming the op
  AGF_CHECK((in.is_contiguous() || in.numel() == 0) && out.is_contiguous() && in.numel() == rows * length &&
                out.numel() == rows,
            "{}: internal error: reduce_rows needs contiguous [{}, {}] rows, got {} -> {}", op, rows, length,
            in.description(), out.description());
  if (rows == 0) return;
  const int device = out.device().index;
  ::agf::cuda::RowReduction pass;
  pass.kind = kind;
  pass.in_dtype = in.dtype();
  pass.in = in.raw_data();
  pass.out_dtype = out.dtype();
  pass.out = out.raw_data();
  pass.rows = rows;
  pass.length = length;
  pass.mean_count = length;
  pass.segments = ::agf::cuda::row_reduction_segments(rows, length);
  if (pass.segments == 1) {
    ::agf::cuda::launch_row_reduction(pass, device);
    return;
  }
  // Few long rows: first each (row, segment) into a partial result in the accumulation type, then the
  // [rows, segments] partial results row by row (a mean divides by the full length only there).
  const DType partial_dtype = in.dtype() == DType::f64 ? DType::f64 : DType::f32;
  const Tensor partial = Tensor::empty({rows, pass.segments}, partial_dtype, out.device());
  ::agf::cuda::RowReduction first = pass;
  first.kind = kind == ReduceKind::mean ? ReduceKind::sum : kind;
  first.out_dtype = partial_dtype;
  first.out = partial.raw_data();
  ::agf::cuda::launch_row_reduction(first, device);
  ::agf::cuda::RowReduction second = pass;
  second.in_dtype = partial_dtype;
  second.in = partial.raw_data();
  second.length = pass.segments;
  second.segments = 1;
  ::agf::cuda::launch_row_reduction(second, device);
}

}  // namespace agf::ops::cuda
