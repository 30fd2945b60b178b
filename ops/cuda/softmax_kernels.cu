// Softmax and log-softmax over the last axis on a GPU (see softmax_kernels.h and row_reduce.cuh for the
// team-per-row layout). Everything is computed in acc_t<T> (f32, or f64 for f64) and rounded once on store.
//
// Forward, per row: one pass for the online statistics (m, s) = (max x, Σ exp(x - m)), then
//   softmax:     y = exp(x - m) / s
//   log_softmax: y = x - (m + log s)
// Backward, per row: one reduction, then the elementwise formula of ops/softmax.h.
#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/row_reduce.cuh"
#include "ops/cuda/softmax_kernels.h"

namespace agf::cuda {

namespace {

template <int Threads, bool Log, class T>
__global__ void __launch_bounds__(team_block_threads(Threads))
    softmax_forward_kernel(const T* x, T* y, int64_t rows, int64_t columns) {
  using A = acc_t<T>;
  __shared__ A scratch_max[Threads / 32], scratch_sum[Threads / 32];
  const int64_t row = team_row();
  if (row >= rows) return;  // whole team: a warp, or the block's only row
  const T* in = x + row * columns;
  T* out = y + row * columns;
  MaxSum<A> stats = empty_max_sum<A>();
  for (int64_t c = threadIdx.x; c < columns; c += Threads) add_value(stats, to_acc(in[c]));
  stats = team_max_sum<Threads>(stats, scratch_max, scratch_sum);
  if constexpr (Log) {
    const A log_total = stats.max + acc_log(stats.sum);
    for (int64_t c = threadIdx.x; c < columns; c += Threads) out[c] = from_acc<T>(to_acc(in[c]) - log_total);
  } else {
    const A scale = A(1) / stats.sum;
    for (int64_t c = threadIdx.x; c < columns; c += Threads) {
      out[c] = from_acc<T>(acc_exp(to_acc(in[c]) - stats.max) * scale);
    }
  }
}

template <int Threads, bool Log, class T>
__global__ void __launch_bounds__(team_block_threads(Threads))
    softmax_backward_kernel(const T* grad, const T* y, T* out, int64_t rows, int64_t columns) {
  using A = acc_t<T>;
  __shared__ A scratch[Threads / 32];
  const int64_t row = team_row();
  if (row >= rows) return;
  const T* g = grad + row * columns;
  const T* yr = y + row * columns;
  T* o = out + row * columns;
  // softmax: Σ g·y;  log_softmax: Σ g
  A total = 0;
  for (int64_t c = threadIdx.x; c < columns; c += Threads) {
    total += Log ? to_acc(g[c]) : to_acc(g[c]) * to_acc(yr[c]);
  }
  total = team_sum<Threads>(total, scratch);
  for (int64_t c = threadIdx.x; c < columns; c += Threads) {
    const A gv = to_acc(g[c]), yv = to_acc(yr[c]);
    o[c] = from_acc<T>(Log ? gv - acc_exp(yv) * total : yv * (gv - total));
  }
}

}  // namespace

void softmax_rows(DType dtype, const void* x, void* y, int64_t rows, int64_t columns, bool log, int device) {
  if (rows == 0 || columns == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    launch_rows(rows, columns, [&]<int Threads>(dim3 grid, dim3 block) {
      if (log) {
        softmax_forward_kernel<Threads, true>
            <<<grid, block, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), rows, columns);
      } else {
        softmax_forward_kernel<Threads, false>
            <<<grid, block, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), rows, columns);
      }
      AGF_CUDA_CHECK_LAUNCH(softmax_forward_kernel);
    });
  });
}

void softmax_backward_rows(DType dtype, const void* grad, const void* y, void* out, int64_t rows, int64_t columns,
                           bool log, int device) {
  if (rows == 0 || columns == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    launch_rows(rows, columns, [&]<int Threads>(dim3 grid, dim3 block) {
      const T* g = static_cast<const T*>(grad);
      const T* yv = static_cast<const T*>(y);
      T* o = static_cast<T*>(out);
      if (log) {
        softmax_backward_kernel<Threads, true><<<grid, block, 0, stream>>>(g, yv, o, rows, columns);
      } else {
        softmax_backward_kernel<Threads, false><<<grid, block, 0, stream>>>(g, yv, o, rows, columns);
      }
      AGF_CUDA_CHECK_LAUNCH(softmax_backward_kernel);
    });
  });
}

}  // namespace agf::cuda
