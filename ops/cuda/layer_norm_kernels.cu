// Layer normalization over the last axis on a GPU (see layer_norm_kernels.h). Statistics and gradients
// are computed in acc_t<T> (f32, or f64 for f64) and rounded once on store.
//
//   forward            one team per row (row_reduce.cuh): μ = Σx/D, then var = Σ(x-μ)²/D (two passes
//                      over the row: no cancellation), rstd = 1/sqrt(var + eps), y = (x-μ)·rstd·w + b.
//   backward, dx       one team per row: two row sums, Σĝ and Σĝ·x̂, then the elementwise formula.
//   backward, dw, db   a column reduction over rows in two passes, deterministic for given sizes:
//                      pass 1, block (32, 8) per (tile of 32 features, chunk of rows): thread (tx, ty)
//                      sums rows ty, ty+8, … of the chunk for feature tile·32 + tx (coalesced reads along
//                      features), then row 0 of the block adds its 8 partials in order and writes
//                      partial[chunk][feature];  pass 2, one thread per feature adds the chunks in order.
#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/layer_norm_kernels.h"
#include "ops/cuda/row_reduce.cuh"

namespace agf::cuda {

namespace {

constexpr int kTile = 32;           // features per column block
constexpr int kTileRows = 8;        // threads along rows in a column block
constexpr int64_t kChunkRows = 64;  // rows per chunk of the column reduction (before capping)
constexpr int64_t kMaxChunks = 512;

template <int Threads, class T>
__global__ void __launch_bounds__(team_block_threads(Threads))
    layer_norm_forward_kernel(const T* x, const T* weight, const T* bias, T* y, acc_t<T>* mean, acc_t<T>* rstd,
                              int64_t rows, int64_t features, acc_t<T> eps) {
  using A = acc_t<T>;
  __shared__ A scratch[Threads / 32];
  const int64_t row = team_row();
  if (row >= rows) return;
  const T* in = x + row * features;
  T* out = y + row * features;
  A total = 0;
  for (int64_t c = threadIdx.x; c < features; c += Threads) total += to_acc(in[c]);
  const A mu = team_sum<Threads>(total, scratch) / static_cast<A>(features);
  A squares = 0;
  for (int64_t c = threadIdx.x; c < features; c += Threads) {
    const A d = to_acc(in[c]) - mu;
    squares += d * d;
  }
  const A r = A(1) / acc_sqrt(team_sum<Threads>(squares, scratch) / static_cast<A>(features) + eps);
  if (threadIdx.x == 0) {
    mean[row] = mu;  // kept in the compute type: the backward rebuilds x̂ from them
    rstd[row] = r;
  }
  for (int64_t c = threadIdx.x; c < features; c += Threads) {
    out[c] = from_acc<T>((to_acc(in[c]) - mu) * r * to_acc(weight[c]) + to_acc(bias[c]));
  }
}

template <int Threads, class T>
__global__ void __launch_bounds__(team_block_threads(Threads))
    layer_norm_grad_x_kernel(const T* grad, const T* x, const T* weight, const acc_t<T>* mean, const acc_t<T>* rstd,
                             T* grad_x, int64_t rows, int64_t features) {
  using A = acc_t<T>;
  __shared__ A scratch[Threads / 32];
  const int64_t row = team_row();
  if (row >= rows) return;
  const T* g = grad + row * features;
  const T* in = x + row * features;
  T* out = grad_x + row * features;
  const A mu = mean[row], r = rstd[row];
  A sum_g_hat = 0, sum_g_hat_x_hat = 0;
  for (int64_t c = threadIdx.x; c < features; c += Threads) {
    const A g_hat = to_acc(g[c]) * to_acc(weight[c]);
    sum_g_hat += g_hat;
    sum_g_hat_x_hat += g_hat * (to_acc(in[c]) - mu) * r;
  }
  const A mean_g_hat = team_sum<Threads>(sum_g_hat, scratch) / static_cast<A>(features);
  const A mean_g_hat_x_hat = team_sum<Threads>(sum_g_hat_x_hat, scratch) / static_cast<A>(features);
  for (int64_t c = threadIdx.x; c < features; c += Threads) {
    const A x_hat = (to_acc(in[c]) - mu) * r;
    out[c] = from_acc<T>(r * (to_acc(g[c]) * to_acc(weight[c]) - mean_g_hat - x_hat * mean_g_hat_x_hat));
  }
}

// Pass 1 of dw, db: partial_w[chunk·features + f] = Σ_{rows r of chunk} g[r, f]·x̂[r, f]; partial_b likewise Σ g.
template <class T>
__global__ void layer_norm_param_partials_kernel(const T* grad, const T* x, const acc_t<T>* mean, const acc_t<T>* rstd,
                                                 acc_t<T>* partial_w, acc_t<T>* partial_b, int64_t rows,
                                                 int64_t features, int64_t chunk_rows) {
  using A = acc_t<T>;
  __shared__ A tile_w[kTileRows][kTile + 1], tile_b[kTileRows][kTile + 1];
  const int64_t feature = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const int64_t chunk = blockIdx.y;
  const int64_t begin = chunk * chunk_rows;
  const int64_t end = begin + chunk_rows < rows ? begin + chunk_rows : rows;
  A sum_w = 0, sum_b = 0;
  if (feature < features) {
    for (int64_t row = begin + threadIdx.y; row < end; row += kTileRows) {
      const A g = to_acc(grad[row * features + feature]);
      const A x_hat = (to_acc(x[row * features + feature]) - mean[row]) * rstd[row];
      sum_w += g * x_hat;
      sum_b += g;
    }
  }
  tile_w[threadIdx.y][threadIdx.x] = sum_w;
  tile_b[threadIdx.y][threadIdx.x] = sum_b;
  __syncthreads();
  if (threadIdx.y == 0 && feature < features) {
    A total_w = 0, total_b = 0;
    for (int k = 0; k < kTileRows; ++k) {
      total_w += tile_w[k][threadIdx.x];
      total_b += tile_b[k][threadIdx.x];
    }
    partial_w[chunk * features + feature] = total_w;
    partial_b[chunk * features + feature] = total_b;
  }
}

// Pass 2: grad_weight[f] = Σ_chunk partial_w[chunk, f] in chunk order; grad_bias likewise.
template <class T>
__global__ void layer_norm_param_finish_kernel(const acc_t<T>* partial_w, const acc_t<T>* partial_b, T* grad_weight,
                                               T* grad_bias, int64_t chunks, int64_t features) {
  using A = acc_t<T>;
  for (int64_t feature = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; feature < features;
       feature += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A total_w = 0, total_b = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      total_w += partial_w[chunk * features + feature];
      total_b += partial_b[chunk * features + feature];
    }
    grad_weight[feature] = from_acc<T>(total_w);
    grad_bias[feature] = from_acc<T>(total_b);
  }
}

// Rows per chunk: about kChunkRows, more when that would make over kMaxChunks chunks. Every chunk
// [c·chunk_rows, min(rows, (c+1)·chunk_rows)) for c < ⌈rows/chunk_rows⌉ is non-empty.
int64_t chunk_rows_for(int64_t rows) {
  int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  if (chunks > kMaxChunks) chunks = kMaxChunks;
  if (chunks < 1) chunks = 1;
  return (rows + chunks - 1) / chunks;
}

}  // namespace

int64_t layer_norm_partial_chunks(int64_t rows) {
  return rows > 0 ? (rows + chunk_rows_for(rows) - 1) / chunk_rows_for(rows) : 1;
}

DType layer_norm_workspace_dtype(DType dtype) { return dtype == DType::f64 ? DType::f64 : DType::f32; }

void layer_norm_rows(DType dtype, const void* x, const void* weight, const void* bias, void* y, void* mean, void* rstd,
                     int64_t rows, int64_t features, double eps, int device) {
  if (rows == 0 || features == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    launch_rows(rows, features, [&]<int Threads>(dim3 grid, dim3 block) {
      layer_norm_forward_kernel<Threads><<<grid, block, 0, stream>>>(
          static_cast<const T*>(x), static_cast<const T*>(weight), static_cast<const T*>(bias), static_cast<T*>(y),
          static_cast<acc_t<T>*>(mean), static_cast<acc_t<T>*>(rstd), rows, features, static_cast<acc_t<T>>(eps));
      AGF_CUDA_CHECK_LAUNCH(layer_norm_forward_kernel);
    });
  });
}

void layer_norm_backward_rows(DType dtype, const void* grad, const void* x, const void* weight, const void* mean,
                              const void* rstd, void* grad_x, void* grad_weight, void* grad_bias, void* workspace,
                              int64_t rows, int64_t features, int device) {
  if (features == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(dtype, [&]<class Element>() {
    using T = device_t<Element>;
    using A = acc_t<T>;
    const T* g = static_cast<const T*>(grad);
    const T* in = static_cast<const T*>(x);
    const A* mu = static_cast<const A*>(mean);
    const A* r = static_cast<const A*>(rstd);
    if (rows > 0) {
      launch_rows(rows, features, [&]<int Threads>(dim3 grid, dim3 block) {
        layer_norm_grad_x_kernel<Threads><<<grid, block, 0, stream>>>(g, in, static_cast<const T*>(weight), mu, r,
                                                                      static_cast<T*>(grad_x), rows, features);
        AGF_CUDA_CHECK_LAUNCH(layer_norm_grad_x_kernel);
      });
    }
    const int64_t chunks = layer_norm_partial_chunks(rows);
    A* partial_w = static_cast<A*>(workspace);
    A* partial_b = partial_w + chunks * features;
    if (rows > 0) {
      const dim3 grid(static_cast<unsigned>((features + kTile - 1) / kTile), static_cast<unsigned>(chunks));
      layer_norm_param_partials_kernel<<<grid, dim3(kTile, kTileRows), 0, stream>>>(
          g, in, mu, r, partial_w, partial_b, rows, features, chunk_rows_for(rows));
      AGF_CUDA_CHECK_LAUNCH(layer_norm_param_partials_kernel);
    } else {
      // No rows: the gradients are zero (one chunk of zeros).
      AGF_CUDA_CHECK(cudaMemsetAsync(workspace, 0, 2 * chunks * features * sizeof(A), stream));
    }
    constexpr int kThreads = 256;
    layer_norm_param_finish_kernel<T><<<blocks_for(features, kThreads), kThreads, 0, stream>>>(
        partial_w, partial_b, static_cast<T*>(grad_weight), static_cast<T*>(grad_bias), chunks, features);
    AGF_CUDA_CHECK_LAUNCH(layer_norm_param_finish_kernel);
  });
}

}  // namespace agf::cuda
