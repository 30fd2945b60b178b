// RoPE on a GPU: one thread per feature pair (grid-stride). Thread p takes pair i = p mod (dk/2) of row
// p div (dk/2), whose position is t = row mod T. The angle, its cosine and sine are computed in double
// with the CPU's formula (ops/rope_angle.h) and rounded to the compute type as the CPU rounds them to
// its element type; the rotation itself is in acc_t (f32 for f16/bf16/f32, f64 for f64).
#include <cstdlib>

#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/rope_kernels.h"
#include "ops/rope_angle.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void rope_kernel(const T* in, T* out, int64_t rows, int64_t length, int64_t head_size, double sign) {
  using Acc = decltype(to_acc(T()));
  const int64_t pairs = head_size / 2;
  const int64_t count = rows * pairs;
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < count;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = p / pairs, i = p % pairs;
    const double angle = ops::rope_angle(row % length, i, head_size);
    const Acc c = static_cast<Acc>(cos(angle));
    const Acc s = static_cast<Acc>(sign * sin(angle));
    const int64_t at = row * head_size + 2 * i;
    const Acc even = to_acc(in[at]), odd = to_acc(in[at + 1]);
    out[at] = from_acc<T>(even * c - odd * s);
    out[at + 1] = from_acc<T>(even * s + odd * c);
  }
}

template <class T>
void launch_typed(const void* in, void* out, int64_t rows, int64_t length, int64_t head_size, double sign,
                  cudaStream_t stream) {
  const int64_t count = rows * (head_size / 2);
  rope_kernel<<<blocks_for(count, kThreads), kThreads, 0, stream>>>(
      static_cast<const device_t<T>*>(in), static_cast<device_t<T>*>(out), rows, length, head_size, sign);
  AGF_CUDA_CHECK_LAUNCH(rope_kernel);
}

}  // namespace

void launch_rope(DType dtype, const void* in, void* out, int64_t rows, int64_t length, int64_t head_size, double sign,
                 int device) {
  if (rows == 0 || head_size == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  switch (dtype) {
    case DType::f64: return launch_typed<double>(in, out, rows, length, head_size, sign, stream);
    case DType::f32: return launch_typed<float>(in, out, rows, length, head_size, sign, stream);
    case DType::f16: return launch_typed<Half>(in, out, rows, length, head_size, sign, stream);
    case DType::bf16: return launch_typed<BFloat16>(in, out, rows, length, head_size, sign, stream);
    default: std::abort();  // the host wrapper refused integer dtypes with an error naming the op
  }
}

}  // namespace agf::cuda
