// The materializing attention path's kernels: everything between the cuBLAS products when the scores
// [B, H, Tq, Tk] are kept in global memory (agf-f, whose coefficient carries the feature index, and head
// sizes the fused kernels are not compiled for), and the rope rotation. They mirror ops/cpu/attention.cpp
// step by step (the names P, s, a, a', W, gs, gC are docs/agf-backprop.md's); all buffers are contiguous
// [B, H, Tq, Tk] or [B, H, T, dk] in the compute type (f32 or f64).
//
// Launch shapes: row kernels (softmax, its backward) one block of 256 threads per row (b, h, m), block-wide
// tree reductions in shared memory; elementwise and per-feature kernels one thread per output element
// (grid-stride); table reductions one block per table entry (δ, h, D), a fixed summation order, so the
// table gradient of this path is deterministic.
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
using fused::PairGeometry;
using fused::ScoreTerm;

constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ T negative_infinity() {
  return -fused::infinity<T>();
}

// The block's threads combine one value each; every thread gets the result. scratch: kThreads elements.
// The tree is fixed (thread i with i + width), so the result does not depend on timing.
template <class T, class Op>
__device__ T block_reduce(T value, T* scratch, Op op) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + width]);
    __syncthreads();
  }
  const T result = scratch[0];
  __syncthreads();  // scratch is free for the next reduction
  return result;
}

// s of a visible pair from its P and the scalar table.
template <class T>
__device__ __forceinline__ T score_of(const MaterializedAttention<T>& A, int64_t h, int64_t m, int64_t n, T scaled_dot) {
  if (A.term == ScoreTerm::none) return scaled_dot;
  const T position = A.table[A.pairs.table_entry(h, m, n)];
  return A.term == ScoreTerm::coefficient ? scaled_dot * position : scaled_dot + position;
}

// ---- forward ---------------------------------------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kThreads) softmax_rows_kernel(const MaterializedAttention<T> A, const T* scores,
                                                                T* weights, T* dropped) {
  __shared__ T scratch[kThreads];
  const PairGeometry& P = A.pairs;
  const int64_t rows = P.batch * P.heads * P.queries, N = P.keys;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t m = row % P.queries, bh = row / P.queries, b = bh / P.heads, h = bh % P.heads;
    const int64_t end = P.visible_end(P.key_length(b), m);
    const T* s = scores + row * N;
    T* a = weights + row * N;
    // max of s over the visible keys
    T top = negative_infinity<T>();
    for (int64_t n = threadIdx.x; n < end; n += kThreads) top = fused::larger(top, score_of(A, h, m, n, s[n]));
    top = block_reduce(top, scratch, fused::MaxOp{});
    // e = exp(s - max) and Σ e (a may alias s: each thread reads and writes its own elements)
    T total = 0;
    for (int64_t n = threadIdx.x; n < end; n += kThreads) {
      const T e = fused::exp_of(score_of(A, h, m, n, s[n]) - top);
      a[n] = e;
      total += e;
    }
    total = block_reduce(total, scratch, fused::SumOp{});
    // a = e / Σ e on the visible keys, 0 on the masked ones (a row with none visible is all 0); a' = dropout(a)
    const T inverse = fused::normalizer(total);
    for (int64_t n = threadIdx.x; n < N; n += kThreads) {
      const T value = n < end ? a[n] * inverse : T(0);
      a[n] = value;
      if (dropped != nullptr) {
        dropped[row * N + n] = (n < end && A.dropout.keeps(P.pair_index(b, h, m, n))) ? value * A.keep_scale : T(0);
      }
    }
  }
}

template <class T>
__global__ void coefficient_product_kernel(const MaterializedAttention<T> A, const T* weights, T* out) {
  const PairGeometry& P = A.pairs;
  const int64_t count = P.batch * P.heads * P.queries * P.keys;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i % P.keys, row = i / P.keys, m = row % P.queries, bh = row / P.queries;
    const int64_t b = bh / P.heads, h = bh % P.heads;
    out[i] = P.visible(P.key_length(b), m, n) ? weights[i] * A.table[P.table_entry(h, m, n)] : T(0);
  }
}

// ---- agf-f: products with a per-feature table ---------------------------------------------------------------------

template <class T>
__global__ void feature_sum_over_features_kernel(const MaterializedAttention<T> A, const T* x, const T* y, T scale, T* out) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim;
  const int64_t count = P.batch * P.heads * P.queries * P.keys;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i % P.keys, row = i / P.keys, m = row % P.queries, bh = row / P.queries;
    const int64_t b = bh / P.heads, h = bh % P.heads;
    T total = 0;
    if (P.visible(P.key_length(b), m, n)) {
      const T* xr = x + row * dk;                       // x[b,h,m,:]
      const T* yr = y + (bh * P.keys + n) * dk;         // y[b,h,n,:]
      const T* c = A.table + P.table_entry(h, m, n) * dk;  // C(δ,h,D,:)
      for (int64_t j = 0; j < dk; ++j) total += xr[j] * c[j] * yr[j];
    }
    out[i] = total * scale;
  }
}

template <class T>
__global__ void feature_sum_over_keys_kernel(const MaterializedAttention<T> A, const T* w, const T* y, T scale, T* out) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim;
  const int64_t count = P.batch * P.heads * P.queries * dk;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = i % dk, row = i / dk, m = row % P.queries, bh = row / P.queries;
    const int64_t b = bh / P.heads, h = bh % P.heads;
    const int64_t end = P.visible_end(P.key_length(b), m);
    const T* wr = w + row * P.keys;
    T total = 0;
    for (int64_t n = 0; n < end; ++n) {
      total += wr[n] * A.table[P.table_entry(h, m, n) * dk + j] * y[(bh * P.keys + n) * dk + j];
    }
    out[i] = total * scale;
  }
}

template <class T>
__global__ void feature_sum_over_queries_kernel(const MaterializedAttention<T> A, const T* w, const T* y, T scale, T* out) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim;
  const int64_t count = P.batch * P.heads * P.keys * dk;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = i % dk, key_row = i / dk, n = key_row % P.keys, bh = key_row / P.keys;
    const int64_t b = bh / P.heads, h = bh % P.heads;
    const int64_t length = P.key_length(b);
    T total = 0;
    for (int64_t m = 0; m < P.queries; ++m) {
      if (!P.visible(length, m, n)) continue;
      total += w[(bh * P.queries + m) * P.keys + n] * A.table[P.table_entry(h, m, n) * dk + j] *
               y[(bh * P.queries + m) * dk + j];
    }
    out[i] = total * scale;
  }
}

// ---- backward ----------------------------------------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kThreads) softmax_backward_rows_kernel(const MaterializedAttention<T> A, const T* weights,
                                                                         const T* dropped, const T* scaled_dot,
                                                                         bool value_coefficient, T* grad,
                                                                         T* pair_table_grad) {
  __shared__ T scratch[kThreads];
  const PairGeometry& P = A.pairs;
  const int64_t rows = P.batch * P.heads * P.queries, N = P.keys;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t m = row % P.queries, bh = row / P.queries, b = bh / P.heads, h = bh % P.heads;
    const int64_t end = P.visible_end(P.key_length(b), m);
    const T* a = weights + row * N;
    const T* w = dropped != nullptr ? dropped + row * N : a;  // a'
    T* ga = grad + row * N;
    T* gc = pair_table_grad != nullptr ? pair_table_grad + row * N : nullptr;
    // PCM-V (scalar C): W = a'·C, so ∂L/∂C gets ∂L/∂W·a' (kept in gc until the score part joins it) and
    // ∂L/∂a' = ∂L/∂W·C. Then Σ_n a'·∂L/∂a'.
    T total = 0;
    for (int64_t n = threadIdx.x; n < end; n += kThreads) {
      T g = ga[n];
      if (value_coefficient) {
        if (gc != nullptr) gc[n] = g * w[n];
        g *= A.table[P.table_entry(h, m, n)];
        ga[n] = g;
      }
      total += w[n] * g;
    }
    total = block_reduce(total, scratch, fused::SumOp{});
    // gs = a'·∂L/∂a' - a·Σ;  ∂L/∂P = gs·C (coefficient) or gs;  ∂L/∂C += gs·P, ∂L/∂bias = gs;  masked: 0
    for (int64_t n = threadIdx.x; n < N; n += kThreads) {
      if (n >= end) {
        ga[n] = 0;
        if (gc != nullptr) gc[n] = 0;
        continue;
      }
      const T gs = w[n] * ga[n] - a[n] * total;
      if (A.term == ScoreTerm::coefficient) {
        if (gc != nullptr) gc[n] = gs * scaled_dot[row * N + n] + (value_coefficient ? gc[n] : T(0));
        ga[n] = gs * A.table[P.table_entry(h, m, n)];
      } else {
        if (gc != nullptr) gc[n] = A.term == ScoreTerm::bias ? gs : T(0);
        ga[n] = gs;
      }
    }
  }
}

// The pairs (m, n) of one table entry (δ, D): n = m - D for δ = 0, n = m + D for δ = 1, m in [first, last).
struct Diagonal {
  int64_t first = 0, last = 0, shift = 0;  // n = m + shift
};
__device__ __forceinline__ Diagonal diagonal_of(const PairGeometry& P, int64_t direction, int64_t distance) {
  Diagonal d;
  if (direction == 0) {
    d.first = distance;
    d.last = P.queries < P.keys + distance ? P.queries : P.keys + distance;
    d.shift = -distance;
  } else if (distance > 0) {  // δ = 1 needs n > m: D >= 1
    d.first = 0;
    d.last = P.queries < P.keys - distance ? P.queries : P.keys - distance;
    d.shift = distance;
  }
  if (d.last < d.first) d.last = d.first;
  return d;
}

template <class T>
__global__ void __launch_bounds__(kThreads) diagonal_sums_kernel(const MaterializedAttention<T> A, const T* pair_values,
                                                                 T* grad_table) {
  __shared__ T scratch[kThreads];
  const PairGeometry& P = A.pairs;
  const int64_t entries = 2 * P.heads * P.distances;
  for (int64_t entry = blockIdx.x; entry < entries; entry += gridDim.x) {
    const int64_t direction = entry / (P.heads * P.distances);
    const int64_t h = (entry / P.distances) % P.heads, distance = entry % P.distances;
    const Diagonal d = diagonal_of(P, direction, distance);
    const int64_t count = d.last - d.first;
    T total = 0;
    for (int64_t item = threadIdx.x; item < P.batch * count; item += kThreads) {
      const int64_t b = item / count, m = d.first + item % count;
      total += pair_values[((b * P.heads + h) * P.queries + m) * P.keys + m + d.shift];
    }
    total = block_reduce(total, scratch, fused::SumOp{});
    if (threadIdx.x == 0) grad_table[entry] = total;
  }
}

template <class T>
__global__ void feature_table_gradient_kernel(const MaterializedAttention<T> A, const T* score_grad, const T* q,
                                              const T* k, const T* dropped, const T* g, const T* v, T scale,
                                              T* grad_table) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim, entries = 2 * P.heads * P.distances;
  for (int64_t entry = blockIdx.x; entry < entries; entry += gridDim.x) {
    const int64_t direction = entry / (P.heads * P.distances);
    const int64_t h = (entry / P.distances) % P.heads, distance = entry % P.distances;
    const Diagonal d = diagonal_of(P, direction, distance);
    for (int64_t j = threadIdx.x; j < dk; j += blockDim.x) {
      T total = 0;
      for (int64_t b = 0; b < P.batch; ++b) {
        const int64_t bh = b * P.heads + h;
        for (int64_t m = d.first; m < d.last; ++m) {
          const int64_t n = m + d.shift;
          const int64_t pair = (bh * P.queries + m) * P.keys + n;
          const int64_t query_row = (bh * P.queries + m) * dk, key_row = (bh * P.keys + n) * dk;
          total += scale * score_grad[pair] * q[query_row + j] * k[key_row + j];
          if (dropped != nullptr) total += dropped[pair] * g[query_row + j] * v[key_row + j];
        }
      }
      grad_table[entry * dk + j] = total;
    }
  }
}

// ---- rope ----------------------------------------------------------------------------------------------------------

template <class S, class Acc>
__global__ void rotate_pairs_kernel(const S* in, S* out, int64_t rows, int64_t length, int64_t head_dim,
                                    const Acc* cos_sin) {
  const int64_t pairs = head_dim / 2, count = rows * pairs;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pair = i % pairs, row = i / pairs, t = row % length;
    const Acc c = cos_sin[(t * pairs + pair) * 2], s = cos_sin[(t * pairs + pair) * 2 + 1];
    const Acc even = agf::cuda::to_acc(in[row * head_dim + 2 * pair]);
    const Acc odd = agf::cuda::to_acc(in[row * head_dim + 2 * pair + 1]);
    out[row * head_dim + 2 * pair] = agf::cuda::from_acc<S>(even * c - odd * s);
    out[row * head_dim + 2 * pair + 1] = agf::cuda::from_acc<S>(even * s + odd * c);
  }
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(rows < 65535LL * 8 ? (rows < 1 ? 1 : rows) : 65535LL * 8); }

}  // namespace

template <class T>
void attention_softmax_rows(const MaterializedAttention<T>& A, const T* scores, T* weights, T* dropped, int device) {
  const int64_t rows = A.pairs.batch * A.pairs.heads * A.pairs.queries;
  if (rows == 0 || A.pairs.keys == 0) return;
  DeviceGuard guard(device);
  softmax_rows_kernel<<<row_blocks(rows), kThreads, 0, current_stream(device)>>>(A, scores, weights, dropped);
  AGF_CUDA_CHECK_LAUNCH(softmax_rows_kernel);
}

template <class T>
void attention_coefficient_product(const MaterializedAttention<T>& A, const T* weights, T* out, int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.keys;
  if (count == 0) return;
  DeviceGuard guard(device);
  coefficient_product_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, weights, out);
  AGF_CUDA_CHECK_LAUNCH(coefficient_product_kernel);
}

template <class T>
void attention_feature_sum_over_features(const MaterializedAttention<T>& A, const T* x, const T* y, T scale, T* out,
                                         int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.keys;
  if (count == 0) return;
  DeviceGuard guard(device);
  feature_sum_over_features_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, x, y, scale, out);
  AGF_CUDA_CHECK_LAUNCH(feature_sum_over_features_kernel);
}

template <class T>
void attention_feature_sum_over_keys(const MaterializedAttention<T>& A, const T* w, const T* y, T scale, T* out,
                                     int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.queries * A.pairs.head_dim;
  if (count == 0) return;
  DeviceGuard guard(device);
  feature_sum_over_keys_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, w, y, scale, out);
  AGF_CUDA_CHECK_LAUNCH(feature_sum_over_keys_kernel);
}

template <class T>
void attention_feature_sum_over_queries(const MaterializedAttention<T>& A, const T* w, const T* y, T scale, T* out,
                                        int device) {
  const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.keys * A.pairs.head_dim;
  if (count == 0) return;
  DeviceGuard guard(device);
  feature_sum_over_queries_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(A, w, y, scale, out);
  AGF_CUDA_CHECK_LAUNCH(feature_sum_over_queries_kernel);
}

template <class T>
void attention_softmax_backward_rows(const MaterializedAttention<T>& A, const T* weights, const T* dropped,
                                     const T* scaled_dot, bool value_coefficient, T* grad, T* pair_table_grad,
                                     int device) {
  const int64_t rows = A.pairs.batch * A.pairs.heads * A.pairs.queries;
  if (rows == 0 || A.pairs.keys == 0) return;
  DeviceGuard guard(device);
  softmax_backward_rows_kernel<<<row_blocks(rows), kThreads, 0, current_stream(device)>>>(
      A, weights, dropped, scaled_dot, value_coefficient, grad, pair_table_grad);
  AGF_CUDA_CHECK_LAUNCH(softmax_backward_rows_kernel);
}

template <class T>
void attention_diagonal_sums(const MaterializedAttention<T>& A, const T* pair_values, T* grad_table, int device) {
  const int64_t entries = 2 * A.pairs.heads * A.pairs.distances;
  if (entries == 0) return;
  DeviceGuard guard(device);
  diagonal_sums_kernel<<<row_blocks(entries), kThreads, 0, current_stream(device)>>>(A, pair_values, grad_table);
  AGF_CUDA_CHECK_LAUNCH(diagonal_sums_kernel);
}

template <class T>
void attention_feature_table_gradient(const MaterializedAttention<T>& A, const T* score_grad, const T* q,
                                      const T* k, const T* dropped, const T* g, const T* v, T scale, T* grad_table,
                                      int device) {
  const int64_t entries = 2 * A.pairs.heads * A.pairs.distances;
  if (entries == 0) return;
  DeviceGuard guard(device);
  constexpr int kFeatureThreads = 128;
  feature_table_gradient_kernel<<<row_blocks(entries), kFeatureThreads, 0, current_stream(device)>>>(
      A, score_grad, q, k, dropped, g, v, scale, grad_table);
  AGF_CUDA_CHECK_LAUNCH(feature_table_gradient_kernel);
}

void attention_rotate_pairs(DType dtype, const void* in, void* out, int64_t rows, int64_t length, int64_t head_dim,
                            const void* cos_sin, int device) {
  const int64_t count = rows * (head_dim / 2);
  if (count == 0) return;
  DeviceGuard guard(device);
  agf::cuda::dispatch_element_type(dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      using S = agf::cuda::device_t<T>;
      using Acc = agf::cuda::acc_t<T>;
      rotate_pairs_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(
          static_cast<const S*>(in), static_cast<S*>(out), rows, length, head_dim, static_cast<const Acc*>(cos_sin));
      AGF_CUDA_CHECK_LAUNCH(rotate_pairs_kernel);
    } else {
      std::abort();  // the op layer passes floating tensors only
    }
  });
}

#define AGF_MATERIALIZED_ATTENTION_INSTANCES(T)                                                                       \
  template void attention_softmax_rows<T>(const MaterializedAttention<T>&, const T*, T*, T*, int);                  \
  template void attention_coefficient_product<T>(const MaterializedAttention<T>&, const T*, T*, int);               \
  template void attention_feature_sum_over_features<T>(const MaterializedAttention<T>&, const T*, const T*, T, T*,  \
                                                       int);                                                         \
  template void attention_feature_sum_over_keys<T>(const MaterializedAttention<T>&, const T*, const T*, T, T*, int); \
  template void attention_feature_sum_over_queries<T>(const MaterializedAttention<T>&, const T*, const T*, T, T*,   \
                                                      int);                                                          \
  template void attention_softmax_backward_rows<T>(const MaterializedAttention<T>&, const T*, const T*, const T*,   \
                                                   bool, T*, T*, int);                                               \
  template void attention_diagonal_sums<T>(const MaterializedAttention<T>&, const T*, T*, int);                     \
  template void attention_feature_table_gradient<T>(const MaterializedAttention<T>&, const T*, const T*, const T*,  \
                                                    const T*, const T*, const T*, T, T*, int);
AGF_MATERIALIZED_ATTENTION_INSTANCES(float)
AGF_MATERIALIZED_ATTENTION_INSTANCES(double)
#undef AGF_MATERIALIZED_ATTENTION_INSTANCES

}  // namespace agf::ops::cuda
