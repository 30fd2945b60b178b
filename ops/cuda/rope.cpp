// RoPE on a GPU: checks the dtype, allocates the output, launches the rotation (rope_kernels.cu).
#include "ops/cuda/rope.h"

#include "ops/cuda/rope_kernels.h"

namespace agf::ops::cuda {

Tensor rope_rotate(const char* op, const Tensor& x, double sign) {
  dispatch_any_floating(x.dtype(), op, []<class T>() {});  // integer tensors: an error naming the op
  AGF_CHECK(x.dim() == 4 && x.is_contiguous() && x.size(3) % 2 == 0,
            "{}: internal error: rope_rotate needs a contiguous [B, H, T, dk] with dk even, got {}", op,
            x.description());
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  const int64_t length = x.size(2), head_size = x.size(3);
  const int64_t rows = head_size == 0 ? 0 : x.numel() / head_size;
  ::agf::cuda::launch_rope(x.dtype(), x.raw_data(), out.raw_data(), rows, length, head_size, sign, x.device().index);
  return out;
}

}  // namespace agf::ops::cuda
