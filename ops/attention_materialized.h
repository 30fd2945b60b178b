#pragma once
// The materializing attention path's per-row and per-element steps, written once for the GPU kernels
// (ops/cuda/attention_materialized_kernels.cu) and for a CPU emulation (ops/attention_materialized_steps.h,
// tests). This path keeps s, a, a', P as [B, H, Tq, Tk] buffers (contiguous, f32 or f64) and follows
// ops/cpu/attention.cpp step by step; the names (P, s, a, a', W, ga, gs, gC) are docs/agf-backprop.md's.
//
// A row step is run by `threads` workers, worker `tid` taking the keys n = tid, tid + threads, ...; `combine(x,
// op)` returns op over every worker's x. On the GPU a block of 256 threads runs a row and combine is a
// block-wide tree reduction; on the CPU one worker runs it (threads = 1, combine returns x).
#include <cstdint>

#include "ops/attention_fused.h"

namespace agf::ops::materialized {

using fused::PairGeometry;
using fused::ScoreTerm;

template <class T>
struct Attention {
  PairGeometry pairs;
  const T* table = nullptr;          // [2, H, distances] (scalar) or [2, H, distances, dk] (agf-f)
  ScoreTerm term = ScoreTerm::none;  // how a scalar table enters s (none for agf-f)
  fused::DropoutMask dropout;
  T keep_scale = 1;

  int64_t rows() const { return pairs.batch * pairs.heads * pairs.queries; }
  int64_t pair_count() const { return rows() * pairs.keys; }
  int64_t table_entries() const { return 2 * pairs.heads * pairs.distances; }
};

// Where a row index (b·H + h)·Tq + m points.
struct RowIndex {
  int64_t b, h, m, bh;
};
AGF_HOST_DEVICE inline RowIndex row_index(const PairGeometry& P, int64_t row) {
  const int64_t bh = row / P.queries;
  return {bh / P.heads, bh % P.heads, row % P.queries, bh};
}

// s of a visible pair from its P and the scalar table.
template <class T>
AGF_HOST_DEVICE T score_of(const Attention<T>& A, int64_t h, int64_t m, int64_t n, T scaled_dot) {
  if (A.term == ScoreTerm::none) return scaled_dot;
  const T position = A.table[A.pairs.table_entry(h, m, n)];
  return A.term == ScoreTerm::coefficient ? scaled_dot * position : scaled_dot + position;
}

// ---- rows ------------------------------------------------------------------------------------------------------

// s from scores (P, or agf-f's finished score when A.term is none), a = softmax over the visible keys, a' =
// dropout(a); masked keys get a = a' = 0, and a row with no visible key is all 0. weights may alias scores
// (each worker reads and writes only its own keys). dropped may be null (no dropout).
template <class T, class Combine>
AGF_FUSED_FN void softmax_row(const Attention<T>& A, int64_t row, int tid, int threads, Combine&& combine,
                              const T* scores, T* weights, T* dropped) {
  const PairGeometry& P = A.pairs;
  const RowIndex r = row_index(P, row);
  const int64_t N = P.keys, end = P.visible_end(P.key_length(r.b), r.m);
  const T* s = scores + row * N;
  T* a = weights + row * N;
  T top = -fused::infinity<T>();
  for (int64_t n = tid; n < end; n += threads) top = fused::larger(top, score_of(A, r.h, r.m, n, s[n]));
  top = combine(top, fused::MaxOp{});
  T total = 0;
  for (int64_t n = tid; n < end; n += threads) {
    const T e = fused::exp_of(score_of(A, r.h, r.m, n, s[n]) - top);
    a[n] = e;
    total += e;
  }
  total = combine(total, fused::SumOp{});
  const T inverse = fused::normalizer(total);
  for (int64_t n = tid; n < N; n += threads) {
    const T value = n < end ? a[n] * inverse : T(0);
    a[n] = value;
    if (dropped != nullptr) {
      dropped[row * N + n] = (n < end && A.dropout.keeps(P.pair_index(r.b, r.h, r.m, n))) ? value * A.keep_scale : T(0);
    }
  }
}

// The softmax backward of one row (docs/agf-backprop.md §3–5). grad holds ∂L/∂a' on entry — or ∂L/∂W when
// value_coefficient (PCM-V with a scalar C), turned into ∂L/∂a' = ∂L/∂W·C — and ∂L/∂P on exit (∂L/∂s·C for a
// coefficient, ∂L/∂s otherwise). pair_table_grad (may be null) receives each pair's ∂L/∂C (gs·P, + ∂L/∂W·a'
// with PCM-V) or ∂L/∂bias (gs), 0 where masked. dropped null = no dropout; scaled_dot (P) for a coefficient.
template <class T, class Combine>
AGF_FUSED_FN void softmax_backward_row(const Attention<T>& A, int64_t row, int tid, int threads, Combine&& combine,
                                       const T* weights, const T* dropped, const T* scaled_dot, bool value_coefficient,
                                       T* grad, T* pair_table_grad) {
  const PairGeometry& P = A.pairs;
  const RowIndex r = row_index(P, row);
  const int64_t N = P.keys, end = P.visible_end(P.key_length(r.b), r.m);
  const T* a = weights + row * N;
  const T* w = dropped != nullptr ? dropped + row * N : a;  // a'
  T* ga = grad + row * N;
  T* gc = pair_table_grad != nullptr ? pair_table_grad + row * N : nullptr;
  // PCM-V: ∂L/∂C gets ∂L/∂W·a' (held in gc until the score part joins it), ∂L/∂a' = ∂L/∂W·C. Then Σ_n a'·∂L/∂a'.
  T total = 0;
  for (int64_t n = tid; n < end; n += threads) {
    T g = ga[n];
    if (value_coefficient) {
      if (gc != nullptr) gc[n] = g * w[n];
      g *= A.table[P.table_entry(r.h, r.m, n)];
      ga[n] = g;
    }
    total += w[n] * g;
  }
  total = combine(total, fused::SumOp{});
  // gs = a'·∂L/∂a' - a·Σ;  ∂L/∂P = gs·C or gs;  ∂L/∂C = gs·P (+ the value part), ∂L/∂bias = gs;  masked: 0
  for (int64_t n = tid; n < N; n += threads) {
    if (n >= end) {
      ga[n] = 0;
      if (gc != nullptr) gc[n] = 0;
      continue;
    }
    const T gs = w[n] * ga[n] - a[n] * total;
    if (A.term == ScoreTerm::coefficient) {
      if (gc != nullptr) gc[n] = gs * scaled_dot[row * N + n] + (value_coefficient ? gc[n] : T(0));
      ga[n] = gs * A.table[P.table_entry(r.h, r.m, n)];
    } else {
      if (gc != nullptr) gc[n] = A.term == ScoreTerm::bias ? gs : T(0);
      ga[n] = gs;
    }
  }
}

// ---- table entries -------------------------------------------------------------------------------------------------

// The pairs of table entry (δ, h, D): n = m + shift, m in [first, last); δ = 0: n = m - D; δ = 1: n = m + D
// (D >= 1: the key after the query). Empty where no pair has that distance.
struct Diagonal {
  int64_t h = 0, first = 0, last = 0, shift = 0;
};
AGF_HOST_DEVICE inline Diagonal diagonal_of(const PairGeometry& P, int64_t entry) {
  const int64_t direction = entry / (P.heads * P.distances), distance = entry % P.distances;
  Diagonal d;
  d.h = (entry / P.distances) % P.heads;
  if (direction == 0) {
    d.first = distance;
    d.last = P.queries < P.keys + distance ? P.queries : P.keys + distance;
    d.shift = -distance;
  } else if (distance > 0) {
    d.last = P.queries < P.keys - distance ? P.queries : P.keys - distance;
    d.shift = distance;
  }
  if (d.last < d.first) d.last = d.first;
  return d;
}

// grad_table[entry] = Σ_b Σ_{pairs of the entry} pair_values[b,h,m,n], summed in a fixed order per worker.
template <class T, class Combine>
AGF_FUSED_FN void diagonal_sum(const Attention<T>& A, int64_t entry, int tid, int threads, Combine&& combine,
                               const T* pair_values, T* grad_table) {
  const PairGeometry& P = A.pairs;
  const Diagonal d = diagonal_of(P, entry);
  const int64_t count = d.last - d.first;
  T total = 0;
  for (int64_t item = tid; item < P.batch * count; item += threads) {
    const int64_t b = item / count, m = d.first + item % count;
    total += pair_values[((b * P.heads + d.h) * P.queries + m) * P.keys + m + d.shift];
  }
  total = combine(total, fused::SumOp{});
  if (tid == 0) grad_table[entry] = total;
}

// ---- elements --------------------------------------------------------------------------------------------------------

// out[b,h,m,n] = w·C(δ,h,D) for a visible pair, 0 elsewhere (PCM-V's W = a' ⊙ C). i: the pair's index.
template <class T>
AGF_HOST_DEVICE T coefficient_product_at(const Attention<T>& A, const T* weights, int64_t i) {
  const PairGeometry& P = A.pairs;
  const int64_t n = i % P.keys;
  const RowIndex r = row_index(P, i / P.keys);
  return P.visible(P.key_length(r.b), r.m, n) ? weights[i] * A.table[P.table_entry(r.h, r.m, n)] : T(0);
}

// agf-f, over the features: out[b,h,m,n] = scale·Σ_j x[b,h,m,j]·C(m,n,j)·y[b,h,n,j] for a visible pair, else 0.
// x [B,H,Tq,dk], y [B,H,Tk,dk]. i: the pair's index.
template <class T>
AGF_HOST_DEVICE T feature_sum_over_features_at(const Attention<T>& A, const T* x, const T* y, T scale, int64_t i) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim, n = i % P.keys, row = i / P.keys;
  const RowIndex r = row_index(P, row);
  if (!P.visible(P.key_length(r.b), r.m, n)) return T(0);
  const T* xr = x + row * dk;
  const T* yr = y + (r.bh * P.keys + n) * dk;
  const T* c = A.table + P.table_entry(r.h, r.m, n) * dk;
  T total = 0;
  for (int64_t j = 0; j < dk; ++j) total += xr[j] * c[j] * yr[j];
  return total * scale;
}

// agf-f, over the keys: out[b,h,m,j] = scale·Σ_{visible n} w[b,h,m,n]·C(m,n,j)·y[b,h,n,j]. y [B,H,Tk,dk];
// i: the index of (b,h,m,j) in [B,H,Tq,dk].
template <class T>
AGF_HOST_DEVICE T feature_sum_over_keys_at(const Attention<T>& A, const T* w, const T* y, T scale, int64_t i) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim, j = i % dk, row = i / dk;
  const RowIndex r = row_index(P, row);
  const int64_t end = P.visible_end(P.key_length(r.b), r.m);
  const T* wr = w + row * P.keys;
  T total = 0;
  for (int64_t n = 0; n < end; ++n)
    total += wr[n] * A.table[P.table_entry(r.h, r.m, n) * dk + j] * y[(r.bh * P.keys + n) * dk + j];
  return total * scale;
}

// agf-f, over the queries: out[b,h,n,j] = scale·Σ_{m that see n} w[b,h,m,n]·C(m,n,j)·y[b,h,m,j]. y [B,H,Tq,dk];
// i: the index of (b,h,n,j) in [B,H,Tk,dk].
template <class T>
AGF_HOST_DEVICE T feature_sum_over_queries_at(const Attention<T>& A, const T* w, const T* y, T scale, int64_t i) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim, j = i % dk, key_row = i / dk, n = key_row % P.keys, bh = key_row / P.keys;
  const int64_t b = bh / P.heads, h = bh % P.heads, length = P.key_length(b);
  T total = 0;
  for (int64_t m = 0; m < P.queries; ++m) {
    if (!P.visible(length, m, n)) continue;
    total += w[(bh * P.queries + m) * P.keys + n] * A.table[P.table_entry(h, m, n) * dk + j] *
             y[(bh * P.queries + m) * dk + j];
  }
  return total * scale;
}

// agf-f: ∂L/∂table[entry, j] = Σ_b Σ_{pairs of the entry} scale·gs·q[m,j]·k[n,j] (+ a'·g[m,j]·v[n,j] when dropped
// is not null: PCM-V). gs: ∂L/∂s [B,H,Tq,Tk]; q, g [B,H,Tq,dk]; k, v [B,H,Tk,dk].
template <class T>
AGF_HOST_DEVICE T feature_table_gradient_at(const Attention<T>& A, const T* score_grad, const T* q, const T* k,
                                            const T* dropped, const T* g, const T* v, T scale, int64_t entry,
                                            int64_t j) {
  const PairGeometry& P = A.pairs;
  const int64_t dk = P.head_dim;
  const Diagonal d = diagonal_of(P, entry);
  T total = 0;
  for (int64_t b = 0; b < P.batch; ++b) {
    const int64_t bh = b * P.heads + d.h;
    for (int64_t m = d.first; m < d.last; ++m) {
      const int64_t n = m + d.shift;
      const int64_t pair = (bh * P.queries + m) * P.keys + n;
      const int64_t query_row = (bh * P.queries + m) * dk, key_row = (bh * P.keys + n) * dk;
      total += scale * score_grad[pair] * q[query_row + j] * k[key_row + j];
      if (dropped != nullptr) total += dropped[pair] * g[query_row + j] * v[key_row + j];
    }
  }
  return total;
}

// ---- the products, as cuBLAS takes them ------------------------------------------------------------------------------
//
// c = alpha·op(a)·op(b) for `batch` row-major matrices stored one after another: op(a) [rows, inner], op(b)
// [inner, cols], c [rows, cols]; a is stored [inner, rows] when trans_a, b [cols, inner] when trans_b. cuBLAS is
// column-major, and a row-major matrix is the column-major transpose, so the call computes cᵀ = op(b)ᵀ·op(a)ᵀ:
// its first operand is b, its second a, its (m, n, k) = (cols, rows, inner).
struct ColumnMajorProduct {
  bool transpose_first = false, transpose_second = false;  // op of b, op of a
  int64_t m = 0, n = 0, k = 0;
  int64_t ld_first = 0, ld_second = 0, ld_out = 0;
  int64_t stride_first = 0, stride_second = 0, stride_out = 0;
};
inline ColumnMajorProduct column_major_product(bool trans_a, bool trans_b, int64_t rows, int64_t cols, int64_t inner) {
  ColumnMajorProduct p;
  p.transpose_first = trans_b;
  p.transpose_second = trans_a;
  p.m = cols;
  p.n = rows;
  p.k = inner;
  p.ld_first = trans_b ? inner : cols;   // b's row length as stored
  p.ld_second = trans_a ? rows : inner;  // a's row length as stored
  p.ld_out = cols;
  p.stride_first = inner * cols;
  p.stride_second = rows * inner;
  p.stride_out = rows * cols;
  return p;
}

}  // namespace agf::ops::materialized
