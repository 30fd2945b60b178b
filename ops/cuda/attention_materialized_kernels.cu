// The materializing attention path's kernels: the steps of ops/attention_materialized.h (each written once
// for the GPU and the CPU emulation) run over a whole call. They sit between the cuBLAS
// products when the scores [B, H, Tq, Tk] are kept in global memory (agf-f, whose coefficient carries the
// feature index, and head sizes the fused kernels are not compiled for); all buffers are contiguous
// [B, H, Tq, Tk] or [B, H, T, dk] in the compute type (f32 or f64).
//
// Launch shapes: row steps (softmax, its backward, the diagonal sums of the table gradient) one block of 256
// threads per row or table entry, with a block-wide tree reduction in shared memory (a fixed order: the table
// gradient of this path is deterministic); element steps one thread per output element (grid-stride).
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/attention_kernels.h"

namespace agf::ops::cuda {

namespace {

using agf::cuda::blocks_for;
using agf::cuda::current_stream;
using agf::cuda::DeviceGuard;
using materialized::Attention;

constexpr int kThreads = 256;

// The block's threads combine one value each; every thread gets the result. scratch: kThreads elements.
// The tree is fixed (thread i with i + width), so the result does not depend on timing.
template <class T, class Op>
__device__ T block_reduce(T value, T* scratch, Op op) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width)
      scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + width]);
    __syncthreads();
  }
  const T result = scratch[0];
  __syncthreads();  // scratch is free for the next reduction
  return result;
}

// A row step over rows (or table entries) 0 .. count-1, one block per row: step(row, tid, threads, combine).
template <class T, class Step>
__device__ __forceinline__ void for_rows(int64_t count, Step&& step) {
  __shared__ T scratch[kThreads];
  auto combine = [&](T value, auto op) { return block_reduce(value, scratch, op); };
  for (int64_t row = blockIdx.x; row < count; row += gridDim.x)
    step(row, static_cast<int>(threadIdx.x), kThreads, combine);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    softmax_rows_kernel(const Attention<T> A, const T* scores, T* weights, T* dropped) {
  for_rows<T>(A.pairs.batch * A.pairs.heads * A.pairs.queries, [&](int64_t row, int tid, int threads, auto& combine) {
    materialized::softmax_row(A, row, tid, threads, combine, scores, weights, dropped);
  });
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    softmax_backward_rows_kernel(const Attention<T> A, const T* weights, const T* dropped, const T* scaled_dot,
                                 bool value_coefficient, T* grad, T* pair_table_grad) {
  for_rows<T>(A.pairs.batch * A.pairs.heads * A.pairs.queries, [&](int64_t row, int tid, int threads, auto& combine) {
    materialized::softmax_backward_row(A, row, tid, threads, combine, weights, dropped, scaled_dot, value_coefficient,
                                       grad, pair_table_grad);
  });
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    diagonal_sums_kernel(const Attention<T> A, const T* pair_values, T* grad_table) {
  for_rows<T>(2 * A.pairs.heads * A.pairs.distances, [&](int64_t entry, int tid, int threads, auto& combine) {
    materialized::diagonal_sum(A, entry, tid, threads, combine, pair_values, grad_table);
  });
}

// out[i] = value(i) for i in [0, count), one thread per element.
template <class Value, class Out>
__device__ __forceinline__ void for_elements(int64_t count, Value&& value, Out* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = value(i);
  }
}

template <class T>
__global__ void coefficient_product_kernel(const Attention<T> A, const T* weights, T* out) {
  for_elements(
      A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.keys,
      [&](int64_t i) { return materialized::coefficient_product_at(A, weights, i); }, out);
}

template <class T>
__global__ void feature_sum_over_features_kernel(const Attention<T> A, const T* x, const T* y, T scale, T* out) {
  for_elements(
      A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.keys,
      [&](int64_t i) { return materialized::feature_sum_over_features_at(A, x, y, scale, i); }, out);
}

template <class T>
__global__ void feature_sum_over_keys_kernel(const Attention<T> A, const T* w, const T* y, T scale, T* out) {
  for_elements(
      A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.head_dim,
      [&](int64_t i) { return materialized::feature_sum_over_keys_at(A, w, y, scale, i); }, out);
}

template <class T>
__global__ void feature_sum_over_queries_kernel(const Attention<T> A, const T* w, const T* y, T scale, T* out) {
  for_elements(
      A.pairs.batch * A.pairs.heads * A.pairs.keys * A.pairs.head_dim,
      [&](int64_t i) { return materialized::feature_sum_over_queries_at(A, w, y, scale, i); }, out);
}

// One block per table entry, its threads over the features j.
template <class T>
__global__ void feature_table_gradient_kernel(const Attention<T> A, const T* score_grad, const T* q, const T* k,
                                              const T* dropped, const T* g, const T* v, T scale, T* grad_table) {
  const int64_t dk = A.pairs.head_dim, entries = 2 * A.pairs.heads * A.pairs.distances;
  for (int64_t entry = blockIdx.x; entry < entries; entry += gridDim.x) {
    for (int64_t j = threadIdx.x; j < dk; j += blockDim.x) {
      grad_table[entry * dk + j] = materialized::feature_table_gradient_at(A, score_grad, q, k, dropped, g, v, scale,
                                                                           entry, j);
    }
  }
}

unsigned row_blocks(int64_t rows) {
  return static_cast<unsigned>(rows < 65535LL * 8 ? (rows < 1 ? 1 : rows) : 65535LL * 8);
}

}  // namespace

template <class T>
void attention_softmax_rows(const Attention<T>& A, const T* scores, T* weights, T* dropped, int device) {
  const int64_t rows = A.pairs.batch * A.pairs.heads * A.pairs.queries;
  if (rows == 0 || A.pairs.keys == 0) return;
  DeviceGuard guard(device);
  softmax_rows_kernel<<<row_blocks(rows), kThreads, 0, current_stream(device)>>>(A, scores, weights, dropped);
  AGF_CUDA_CHECK_LAUNCH(softmax_rows_kernel);
}

template <class T>
void attention_coefficient_product(const Attention<T>& A, const T* weights, T* out, int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.keys;
  if (count == 0) return;
  DeviceGuard guard(device);
  coefficient_product_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, weights, out);
  AGF_CUDA_CHECK_LAUNCH(coefficient_product_kernel);
}

template <class T>
void attention_feature_sum_over_features(const Attention<T>& A, const T* x, const T* y, T scale, T* out, int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.keys;
  if (count == 0) return;
  DeviceGuard guard(device);
  feature_sum_over_features_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, x, y, scale,
                                                                                                         out);
  AGF_CUDA_CHECK_LAUNCH(feature_sum_over_features_kernel);
}

template <class T>
void attention_feature_sum_over_keys(const Attention<T>& A, const T* w, const T* y, T scale, T* out, int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.head_dim;
  if (count == 0) return;
  DeviceGuard guard(device);
  feature_sum_over_keys_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, w, y, scale,
                                                                                                     out);
  AGF_CUDA_CHECK_LAUNCH(feature_sum_over_keys_kernel);
}

template <class T>
void attention_feature_sum_over_queries(const Attention<T>& A, const T* w, const T* y, T scale, T* out, int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.keys * A.pairs.head_dim;
  if (count == 0) return;
  DeviceGuard guard(device);
  feature_sum_over_queries_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, w, y, scale,
                                                                                                        out);
  AGF_CUDA_CHECK_LAUNCH(feature_sum_over_queries_kernel);
}

template <class T>
void attention_softmax_backward_rows(const Attention<T>& A, const T* weights, const T* dropped, const T* scaled_dot,
                                     bool value_coefficient, T* grad, T* pair_table_grad, int device) {
  const int64_t rows = A.pairs.batch * A.pairs.heads * A.pairs.queries;
  if (rows == 0 || A.pairs.keys == 0) return;
  DeviceGuard guard(device);
  softmax_backward_rows_kernel<<<row_blocks(rows), kThreads, 0, current_stream(device)>>>(
      A, weights, dropped, scaled_dot, value_coefficient, grad, pair_table_grad);
  AGF_CUDA_CHECK_LAUNCH(softmax_backward_rows_kernel);
}

template <class T>
void attention_diagonal_sums(const Attention<T>& A, const T* pair_values, T* grad_table, int device) {
  const int64_t entries = 2 * A.pairs.heads * A.pairs.distances;
  if (entries == 0) return;
  DeviceGuard guard(device);
  diagonal_sums_kernel<<<row_blocks(entries), kThreads, 0, current_stream(device)>>>(A, pair_values, grad_table);
  AGF_CUDA_CHECK_LAUNCH(diagonal_sums_kernel);
}

template <class T>
void attention_feature_table_gradient(const Attention<T>& A, const T* score_grad, const T* q, const T* k,
                                      const T* dropped, const T* g, const T* v, T scale, T* grad_table, int device) {
  const int64_t entries = 2 * A.pairs.heads * A.pairs.distances;
  if (entries == 0) return;
  DeviceGuard guard(device);
  constexpr int kFeatureThreads = 128;
  feature_table_gradient_kernel<<<row_blocks(entries), kFeatureThreads, 0, current_stream(device)>>>(
      A, score_grad, q, k, dropped, g, v, scale, grad_table);
  AGF_CUDA_CHECK_LAUNCH(feature_table_gradient_kernel);
}

#define AGF_MATERIALIZED_ATTENTION_INSTANCES(T)                                                                     \
  template void attention_softmax_rows<T>(const Attention<T>&, const T*, T*, T*, int);                              \
  template void attention_coefficient_product<T>(const Attention<T>&, const T*, T*, int);                           \
  template void attention_feature_sum_over_features<T>(const Attention<T>&, const T*, const T*, T, T*, int);        \
  template void attention_feature_sum_over_keys<T>(const Attention<T>&, const T*, const T*, T, T*, int);            \
  template void attention_feature_sum_over_queries<T>(const Attention<T>&, const T*, const T*, T, T*, int);         \
  template void attention_softmax_backward_rows<T>(const Attention<T>&, const T*, const T*, const T*, bool, T*, T*, \
                                                   int);                                                            \
  template void attention_diagonal_sums<T>(const Attention<T>&, const T*, T*, int);                                 \
  template void attention_feature_table_gradient<T>(const Attention<T>&, const T*, const T*, const T*, const T*,    \
                                                    const T*, const T*, T, T*, int);
AGF_MATERIALIZED_ATTENTION_INSTANCES(float)
AGF_MATERIALIZED_ATTENTION_INSTANCES(double)
#undef AGF_MATERIALIZED_ATTENTION_INSTANCES

}  // namespace agf::ops::cuda
