// Cross-entropy with label smoothing and ignore_index on a GPU (see cross_entropy_kernels.h).
//
//   loss, pass 1   one team per row (row_reduce.cuh), in acc_t: the online (max, Σexp) and Σ z over the
//                  row, lse = max + log Σexp, then loss_r = smoothed_row_loss(lse, z_y, Σz/V, ε) stored
//                  as a double (0 for an ignored row).
//   loss, pass 2   one block of kSumThreads threads adds the row losses in f64 (a fixed order: thread t
//                  takes rows t, t + kSumThreads, …, then a block tree), divides by `counted` (read on the
//                  device, where the target scan left it) — the CPU's mean over the rows that are not
//                  ignored — and rounds once to the logits' dtype.
//   backward       one team per row: lse as above, then every element of the row in one pass.
#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cross_entropy_row.h"
#include "ops/cuda/cross_entropy_kernels.h"
#include "ops/cuda/row_reduce.cuh"

namespace agf::cuda {

namespace {

constexpr int kSumThreads = 1024;

template <int Threads, class T, class I>
__global__ void __launch_bounds__(team_block_threads(Threads))
    row_loss_kernel(const T* logits, const I* targets, double* row_losses, int64_t rows, int64_t classes,
                    int64_t ignore_index, acc_t<T> smoothing) {
  using A = acc_t<T>;
  __shared__ A scratch_max[Threads / 32], scratch_sum[Threads / 32];
  const int64_t row = team_row();
  if (row >= rows) return;
  const int64_t target = static_cast<int64_t>(targets[row]);
  // An ignored row; or a bad target, which the deferred check reports (ops/cuda/id_check.h): the same for
  // the whole team.
  if (target == ignore_index || target < 0 || target >= classes) {
    if (threadIdx.x == 0) row_losses[row] = 0.0;
    return;
  }
  const T* z = logits + row * classes;
  MaxSum<A> stats = empty_max_sum<A>();
  A total = 0;
  for (int64_t c = threadIdx.x; c < classes; c += Threads) {
    const A value = to_acc(z[c]);
    add_value(stats, value);
    total += value;
  }
  stats = team_max_sum<Threads>(stats, scratch_max, scratch_sum);
  total = team_sum<Threads>(total, scratch_sum);
  if (threadIdx.x == 0) {
    const A lse = stats.max + acc_log(stats.sum);
    row_losses[row] = static_cast<double>(
        ops::smoothed_row_loss<A>(lse, to_acc(z[target]), total / static_cast<A>(classes), smoothing));
  }
}

template <class T>
__global__ void __launch_bounds__(kSumThreads)
    mean_loss_kernel(const double* row_losses, int64_t rows, const unsigned long long* counted, T* loss) {
  __shared__ double scratch[kSumThreads / 32];
  double total = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kSumThreads) total += row_losses[r];
  total = team_sum<kSumThreads>(total, scratch);
  if (threadIdx.x == 0) *loss = from_acc<T>(*counted ? total / static_cast<double>(*counted) : 0.0);
}

template <int Threads, class T, class I>
__global__ void __launch_bounds__(team_block_threads(Threads))
    backward_kernel(const T* grad, const T* logits, const I* targets, T* grad_logits, int64_t rows, int64_t classes,
                    int64_t ignore_index, acc_t<T> smoothing, const unsigned long long* counted) {
  using A = acc_t<T>;
  __shared__ A scratch_max[Threads / 32], scratch_sum[Threads / 32];
  const int64_t row = team_row();
  if (row >= rows) return;
  const int64_t target = static_cast<int64_t>(targets[row]);
  const T* z = logits + row * classes;
  T* out = grad_logits + row * classes;
  if (target == ignore_index || target < 0 || target >= classes) {  // ignored, or bad (reported later)
    for (int64_t c = threadIdx.x; c < classes; c += Threads) out[c] = from_acc<T>(A(0));
    return;
  }
  MaxSum<A> stats = empty_max_sum<A>();
  for (int64_t c = threadIdx.x; c < classes; c += Threads) add_value(stats, to_acc(z[c]));
  stats = team_max_sum<Threads>(stats, scratch_max, scratch_sum);
  const A lse = stats.max + acc_log(stats.sum);
  const A scale = to_acc(*grad) / static_cast<A>(*counted);  // counted >= 1: this row is one of them
  const A smooth = smoothing / static_cast<A>(classes);
  const A target_term = scale * (A(1) - smoothing);
  for (int64_t c = threadIdx.x; c < classes; c += Threads) {
    const A value = scale * (acc_exp(to_acc(z[c]) - lse) - smooth);
    out[c] = from_acc<T>(c == target ? value - target_term : value);
  }
}

}  // namespace

void cross_entropy_loss(DType dtype, const void* logits, DType target_dtype, const void* targets, void* loss,
                        double* row_losses, int64_t rows, int64_t classes, int64_t ignore_index, double smoothing,
                        const unsigned long long* counted, int device) {
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    if (rows > 0 && classes > 0) {
      dispatch_index_kernel(target_dtype, [&]<class I>() {
        launch_rows(rows, classes, [&]<int Threads>(dim3 grid, dim3 block) {
          row_loss_kernel<Threads><<<grid, block, 0, stream>>>(static_cast<const T*>(logits),
                                                               static_cast<const I*>(targets), row_losses, rows,
                                                               classes, ignore_index, static_cast<acc_t<T>>(smoothing));
          AGF_CUDA_CHECK_LAUNCH(row_loss_kernel);
        });
      });
    }
    // With no classes every row must be ignored (a target cannot lie in [0, 0)), so counted = 0 and no
    // row loss is read.
    mean_loss_kernel<T>
        <<<1, kSumThreads, 0, stream>>>(row_losses, classes > 0 ? rows : 0, counted, static_cast<T*>(loss));
    AGF_CUDA_CHECK_LAUNCH(mean_loss_kernel);
  });
}

void cross_entropy_backward(DType dtype, const void* grad, const void* logits, DType target_dtype, const void* targets,
                            void* grad_logits, int64_t rows, int64_t classes, int64_t ignore_index, double smoothing,
                            const unsigned long long* counted, int device) {
  if (rows == 0 || classes == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    using A = acc_t<T>;
    dispatch_index_kernel(target_dtype, [&]<class I>() {
      launch_rows(rows, classes, [&]<int Threads>(dim3 grid, dim3 block) {
        backward_kernel<Threads><<<grid, block, 0, stream>>>(static_cast<const T*>(grad), static_cast<const T*>(logits),
                                                             static_cast<const I*>(targets),
                                                             static_cast<T*>(grad_logits), rows, classes, ignore_index,
                                                             static_cast<A>(smoothing), counted);
        AGF_CUDA_CHECK_LAUNCH(backward_kernel);
      });
    });
  });
}

}  // namespace agf::cuda
