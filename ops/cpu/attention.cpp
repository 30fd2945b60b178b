// The attention kernel on the CPU: one (batch, head) pair at a time, pairs spread over OpenMP threads.
//
// Where the coefficient does not depend on the feature j (none, rope, bias schemes, agf-b, agf-m,
// alibi-mult), every product with dk in it is an Eigen GEMM and the positional term is one gathered
// multiply or add per (m, n). agf-f (LC3, a coefficient per feature) cannot factor out, so its products
// are direct loops over (m, n, j) that read the table row C(δ, h, D, :) — a [B,H,T,T,dk] tensor is never
// built — shaped so the vectorized index is innermost and the sums stay in registers (sum_over_features,
// sum_over_pairs, and a sweep along the diagonals |m - n| = D for ∂L/∂C). Hot loops allocate nothing: each
// thread owns its scratch for the whole call.
//
// The formulas, with the names used here (P, s, a, a' (a_prime), W, gW, ga, gs, gP, gT), are derived in
// docs/agf-backprop.md, whose symbol table these names follow.
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/philox_stream.h"
#include "ops/attention.h"
#include "ops/attention_geometry.h"
#include "ops/attention_positional.h"
#include "ops/cpu/vector_exp.h"
#include "ops/device_route.h"
#include "ops/dropout_mask.h"
#include "ops/rope.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/attention.h"
#endif

namespace agf::ops {

namespace {

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>, 0, Eigen::OuterStride<>>;
template <class T>
using MatrixMap = Eigen::Map<RowMatrix<T>, 0, Eigen::OuterStride<>>;

// A [B, H, T, dk] tensor whose last axis has unit stride (a copy only when it has not).
Tensor unit_stride_rows(const Tensor& t) { return t.strides()[3] == 1 ? t : t.contiguous(); }

// Where one head's [T, dk] matrix lives inside a [B, H, T, dk] tensor with a unit-stride last axis.
struct HeadLayout {
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  explicit HeadLayout(const Tensor& t)
      : batch_stride(t.strides()[0]), head_stride(t.strides()[1]), row_stride(t.strides()[2]) {}
  HeadLayout(int64_t b, int64_t h, int64_t r) : batch_stride(b), head_stride(h), row_stride(r) {}
  int64_t offset(int64_t b, int64_t h) const { return b * batch_stride + h * head_stride; }
};

// A fresh [B, H, T, dk] tensor laid out in memory as [B, T, H, dk] (see AttentionForward::output).
Tensor heads_interleaved(int64_t B, int64_t H, int64_t T, int64_t dk, DType dtype, Device device) {
  const Tensor storage = Tensor::empty({B, T, H, dk}, dtype, device);
  return storage.permute({0, 2, 1, 3});
}

using Geometry = AttentionGeometry;

// The shared checks (ops/attention_geometry.h), on the CPU.
Geometry geometry_of(const Tensor& q, const Tensor& k, const Tensor& v, PositionalScheme scheme) {
  const Geometry g = attention_geometry(q, k, v, scheme);
  check_cpu(q, "attention");
  return g;
}

// Keys at n >= length[b] are padding.
std::vector<int64_t> key_lengths_of(const Tensor& key_lengths, const Geometry& g) {
  if (!key_lengths.defined()) return std::vector<int64_t>(static_cast<std::size_t>(g.batch), g.keys);
  AGF_CHECK(is_integer(key_lengths.dtype()) && key_lengths.dim() == 1 && key_lengths.size(0) == g.batch,
            "attention: key_lengths must be an integer tensor [{}] (one length per sequence), got {}", g.batch,
            key_lengths.description());
  std::vector<int64_t> lengths = key_lengths.to_int_vector();
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    AGF_CHECK(lengths[b] >= 0 && lengths[b] <= g.keys, "attention: key length {} of sequence {} is outside [0, {}]",
              lengths[b], b, g.keys);
  }
  return lengths;
}

// Everything one call shares across threads: shapes, inputs, the table in T, outputs.
template <class T>
struct Kernel {
  Geometry g;
  AttentionOptions options;
  TableUse use = TableUse::none;
  T scale = 0;  // 1/√dk
  std::vector<int64_t> lengths;
  std::vector<T> table;  // [2, H, distances, width]
  // agf-f only: the table of head h re-laid out as E[h, j, t] with t = n - m + distances - 1, so that along
  // a row of the score matrix (n = 0, 1, ...) the coefficient of feature j is contiguous in memory.
  std::vector<T> expanded;
  int64_t expanded_stride = 0;  // 2·distances - 1

  const T *q = nullptr, *k = nullptr, *v = nullptr;
  HeadLayout q_layout{0, 0, 0}, k_layout{0, 0, 0}, v_layout{0, 0, 0};

  T* weights = nullptr;     // a  [B, H, M, N]
  T* dropped = nullptr;     // a' [B, H, M, N] or null (no dropout)
  T* scaled_dot = nullptr;  // P  [B, H, M, N] or null

  // Keys 0 .. visible_end-1 are visible to query m of sequence b.
  int64_t visible_end(int64_t b, int64_t m) const {
    const int64_t end = lengths[b];
    return options.causal ? std::min(end, m + 1) : end;
  }
  int64_t head_offset(int64_t b, int64_t h) const { return (b * g.heads + h) * g.queries * g.keys; }
  // The table rows of head h: `before` for keys at or before the query (δ = 0), `after` for δ = 1. Null for a
  // scheme without a table: an offset from the empty vector's null data() is undefined behaviour (UBSan).
  const T* before(int64_t h) const {
    return table.empty() ? nullptr : table.data() + (0 * g.heads + h) * g.distances * g.width;
  }
  const T* after(int64_t h) const {
    return table.empty() ? nullptr : table.data() + (1 * g.heads + h) * g.distances * g.width;
  }
  // The table entry (row of `width`) of the pair (m, n), with D = |m - n|.
  static const T* entry(const T* before, const T* after, int64_t m, int64_t n, int64_t width) {
    return n <= m ? before + (m - n) * width : after + (n - m) * width;
  }
  const T* expanded_row(int64_t h, int64_t j) const { return expanded.data() + (h * g.head_dim + j) * expanded_stride; }
  int64_t direction_distance_index(int64_t m, int64_t n) const {  // index of (δ, D) in a per-head [2, distances]
    return n <= m ? (m - n) : g.distances + (n - m);
  }
};

// ---- softmax over the visible keys of one row -------------------------------------------------------------

// a[n] = exp(s[n] - max s) / Σ exp(...) for n < end; a[n] = 0 for n >= end (masked: s = -inf). A row with
// no visible key (end == 0) is all zeros: "softmax of nothing" has no mass to give, and 0/0 is never taken.
template <class T>
void softmax_visible(T* row, int64_t end, int64_t keys) {
  if (end > 0) {
    const T total = cpu::exp_shifted(row, cpu::row_max(row, end), row, end);
    const T inverse = T(1) / total;
    for (int64_t n = 0; n < end; ++n) row[n] *= inverse;
  }
  for (int64_t n = end; n < keys; ++n) row[n] = 0;
}

// ---- the agf-f products, vectorized without a [T, T, dk] tensor -------------------------------------------------
//
// Every agf-f product is Σ over one index of a three-factor product x·C·y. Two loop shapes cover them, both with
// the vectorized index innermost and the accumulators in registers (no horizontal sums, no read-modify-write of
// memory per pair):
//   "along a row"    out[n] = Σ_j x[j] · E[j, n + shift] · yᵀ[j, n]      (sums over the feature j)
//   "over pairs"     out[j] = Σ_i w_i · C_i[j] · y_i[j]                  (sums over keys, queries or a diagonal)

// Four SIMD registers of accumulators (64 floats or 32 doubles), as GCC vector types so that they stay in
// registers across the loop over pairs (a plain array was spilled to the stack on every iteration).
template <class T>
struct Accumulator {
  typedef T Vector __attribute__((vector_size(64)));
  static constexpr int64_t kLanes = 64 / sizeof(T);
  static constexpr int64_t kWidth = 4 * kLanes;
  Vector part[4] = {};

  static Vector load(const T* p) {
    Vector v;
    std::memcpy(&v, p, sizeof(Vector));
    return v;
  }
  // acc += w · c · y over kWidth consecutive elements
  void add(T w, const T* c, const T* y) {
    for (int r = 0; r < 4; ++r) part[r] += w * load(c + r * kLanes) * load(y + r * kLanes);
  }
  // acc += w · c · y + u · x · z
  void add2(T w, const T* c, const T* y, T u, const T* x, const T* z) {
    for (int r = 0; r < 4; ++r) {
      part[r] += w * load(c + r * kLanes) * load(y + r * kLanes) + u * load(x + r * kLanes) * load(z + r * kLanes);
    }
  }
  void store(T* out) const { std::memcpy(out, part, sizeof(part)); }
};

// out[n] = Σ_j x[j] · e_j[shift + n] · yt_j[n]  for n < count;  e_j = expanded + j·e_stride, yt_j = yt + j·y_stride.
// Entries count <= n < capacity may be written too (a whole block is cheaper than a ragged one; callers
// overwrite them); yt and the expanded rows must be readable up to capacity.
template <class T>
void sum_over_features(const T* x, const T* expanded, int64_t e_stride, int64_t shift, const T* yt, int64_t y_stride,
                       int64_t dk, int64_t count, int64_t capacity, T* out) {
  constexpr int64_t width = Accumulator<T>::kWidth;
  int64_t nb = 0;
  for (; nb < count && nb + width <= capacity; nb += width) {
    Accumulator<T> acc;
    for (int64_t j = 0; j < dk; ++j) acc.add(x[j], expanded + j * e_stride + shift + nb, yt + j * y_stride + nb);
    acc.store(out + nb);
  }
  if (nb >= count) return;
  // the ragged end of the row: the same sums, vectorized over the remaining keys
  const int64_t length = count - nb;
  T acc[width] = {};
  for (int64_t j = 0; j < dk; ++j) {
    const T xj = x[j];
    const T* e = expanded + j * e_stride + shift + nb;
    const T* y = yt + j * y_stride + nb;
#pragma omp simd
    for (int64_t i = 0; i < length; ++i) acc[i] += xj * e[i] * y[i];
  }
  for (int64_t i = 0; i < length; ++i) out[nb + i] = acc[i];
}

// out[j] = Σ_{i < count} w_i · c_i[j] · y_i[j], where term(i, w, c, y) sets the weight and the two rows of term i;
// terms with w = 0 (masked pairs, dropped weights) are skipped.
template <class T, class Term>
void sum_over_pairs(int64_t dk, int64_t count, Term term, T* out) {
  constexpr int64_t width = Accumulator<T>::kWidth;
  int64_t jb = 0;
  for (; jb + width <= dk; jb += width) {
    Accumulator<T> acc;
    for (int64_t i = 0; i < count; ++i) {
      T w;
      const T *c, *y;
      term(i, w, c, y);
      if (w != T(0)) acc.add(w, c + jb, y + jb);
    }
    acc.store(out + jb);
  }
  if (jb == dk) return;
  for (int64_t j = jb; j < dk; ++j) out[j] = 0;  // the tail features
  for (int64_t i = 0; i < count; ++i) {
    T w;
    const T *c, *y;
    term(i, w, c, y);
    for (int64_t j = jb; j < dk; ++j) out[j] += w * c[j] * y[j];
  }
}

// ---- forward of one (b, h) ------------------------------------------------------------------------------------

// Per-thread scratch of the forward.
template <class T>
struct ForwardScratch {
  std::vector<T> W;           // [M, N]   W = a' ⊙ C (PCM-V, scalar coefficient)
  std::vector<T> transposed;  // [dk, N]  kᵀ (agf-f)
};

template <class T>
void forward_head(const Kernel<T>& K, int64_t b, int64_t h, T* out, const HeadLayout& out_layout,
                  ForwardScratch<T>& S) {
  const int64_t M = K.g.queries, N = K.g.keys, dk = K.g.head_dim, width = K.g.width;
  const ConstMatrixMap<T> Q(K.q + K.q_layout.offset(b, h), M, dk, Eigen::OuterStride<>(K.q_layout.row_stride));
  const ConstMatrixMap<T> Kmat(K.k + K.k_layout.offset(b, h), N, dk, Eigen::OuterStride<>(K.k_layout.row_stride));
  const ConstMatrixMap<T> V(K.v + K.v_layout.offset(b, h), N, dk, Eigen::OuterStride<>(K.v_layout.row_stride));
  const T* q = K.q + K.q_layout.offset(b, h);
  const T* v = K.v + K.v_layout.offset(b, h);
  T* a = K.weights + K.head_offset(b, h);
  const T* before = K.before(h);
  const T* after = K.after(h);

  // 1. scores s (written into a, then turned into a in place)
  if (K.use != TableUse::feature_coefficient) {
    // P = (1/√dk)·q·kᵀ (kept for the backward when a coefficient multiplies it)
    T* p = K.scaled_dot ? K.scaled_dot + K.head_offset(b, h) : a;
    MatrixMap<T>(p, M, N, Eigen::OuterStride<>(N)).noalias() = K.scale * (Q * Kmat.transpose());
    for (int64_t m = 0; m < M; ++m) {
      const int64_t end = K.visible_end(b, m);
      T* s = a + m * N;
      const T* p_row = p + m * N;
      if (K.use == TableUse::coefficient) {
        for (int64_t n = 0; n < end; ++n) s[n] = p_row[n] * *Kernel<T>::entry(before, after, m, n, 1);  // s = P·C
      } else if (K.use == TableUse::bias) {
        for (int64_t n = 0; n < end; ++n) s[n] += *Kernel<T>::entry(before, after, m, n, 1);  // s = P + bias
      }
      softmax_visible(s, end, N);
    }
  } else {
    // agf-f: s[m,n] = (1/√dk)·Σ_j q[m,j]·C(δ,h,D,j)·k[n,j], summed along the row with kᵀ and the expanded table
    T* kt = S.transposed.data();
    MatrixMap<T>(kt, dk, N, Eigen::OuterStride<>(N)) = Kmat.transpose();
    for (int64_t m = 0; m < M; ++m) {
      const int64_t end = K.visible_end(b, m);
      T* s = a + m * N;
      sum_over_features(q + m * K.q_layout.row_stride, K.expanded_row(h, 0), K.expanded_stride, K.g.distances - 1 - m,
                        kt, N, dk, end, N, s);
      for (int64_t n = 0; n < end; ++n) s[n] *= K.scale;
      softmax_visible(s, end, N);
    }
  }

  // 2. a' = dropout(a): element (b,h,m,n) of the Philox stream, as ops::dropout_forward on [B,H,M,N]
  const T* a_prime = a;
  if (K.dropped) {
    T* dropped = K.dropped + K.head_offset(b, h);
    const float threshold = dropout_threshold(K.options.dropout);
    const T keep_scale = static_cast<T>(1.0 / (1.0 - K.options.dropout));
    const uint64_t first = static_cast<uint64_t>(K.head_offset(b, h));
    // As in ops/cpu/dropout.cpp: captured by value and the product outside the select, so that it vectorizes.
    PhiloxStream(K.options.dropout_seed, K.options.dropout_offset)
        .for_each(first, M * N, [dropped, a, first, threshold, keep_scale](uint64_t element, uint32_t bits) {
          const uint64_t e = element - first;
          dropped[e] = (dropout_keeps(bits, threshold) ? a[e] : T(0)) * keep_scale;
        });
    a_prime = dropped;
  }

  // 3. o = Σ_n a'·v  (·C with PCM-V)
  MatrixMap<T> O(out + out_layout.offset(b, h), M, dk, Eigen::OuterStride<>(out_layout.row_stride));
  if (!K.options.pcmv) {
    O.noalias() = ConstMatrixMap<T>(a_prime, M, N, Eigen::OuterStride<>(N)) * V;
  } else if (K.use == TableUse::coefficient) {
    // W = a' ⊙ C, then o = W·v
    for (int64_t m = 0; m < M; ++m) {
      const int64_t end = K.visible_end(b, m);
      for (int64_t n = 0; n < end; ++n) S.W[m * N + n] = a_prime[m * N + n] * *Kernel<T>::entry(before, after, m, n, 1);
      for (int64_t n = end; n < N; ++n) S.W[m * N + n] = 0;
    }
    O.noalias() = ConstMatrixMap<T>(S.W.data(), M, N, Eigen::OuterStride<>(N)) * V;
  } else {
    // agf-f: o[m,j] = Σ_n a'[m,n]·C(δ,h,D,j)·v[n,j]
    for (int64_t m = 0; m < M; ++m) {
      sum_over_pairs<T>(
          dk, K.visible_end(b, m),
          [&](int64_t n, T& weight, const T*& c, const T*& y) {
            weight = a_prime[m * N + n];
            c = Kernel<T>::entry(before, after, m, n, width);
            y = v + n * K.v_layout.row_stride;
          },
          out + out_layout.offset(b, h) + m * out_layout.row_stride);
    }
  }
}

// ---- backward of one (b, h) -----------------------------------------------------------------------------------

// Where the backward reads g and writes gq, gk, gv.
template <class T>
struct GradientBuffers {
  const T* grad = nullptr;  // g = ∂L/∂o
  HeadLayout grad_layout{0, 0, 0};
  T *gq = nullptr, *gk = nullptr, *gv = nullptr;
  HeadLayout gq_layout{0, 0, 0}, gk_layout{0, 0, 0}, gv_layout{0, 0, 0};
};

// Per-thread scratch of the backward.
template <class T>
struct BackwardScratch {
  std::vector<T> W;           // [M, N]  W = a' ⊙ C (PCM-V, scalar coefficient)
  std::vector<T> g_pairs;     // [M, N]  one buffer for gW (PCM-V), ga, gs and gP in turn, each made in place
  std::vector<T> gT;          // [2, distances, width]  gT = ∂L/∂T, the positional table's gradient, of this head
  std::vector<T> transposed;  // [dk, N]  vᵀ (agf-f with PCM-V)
};

template <class T>
void backward_head(const Kernel<T>& K, const GradientBuffers<T>& buffers, int64_t b, int64_t h, BackwardScratch<T>& S) {
  const int64_t M = K.g.queries, N = K.g.keys, dk = K.g.head_dim, width = K.g.width;
  const T* q = K.q + K.q_layout.offset(b, h);
  const T* k = K.k + K.k_layout.offset(b, h);
  const T* v = K.v + K.v_layout.offset(b, h);
  const T* g = buffers.grad + buffers.grad_layout.offset(b, h);
  T* gq = buffers.gq + buffers.gq_layout.offset(b, h);
  T* gk = buffers.gk + buffers.gk_layout.offset(b, h);
  T* gv = buffers.gv + buffers.gv_layout.offset(b, h);
  const ConstMatrixMap<T> Q(q, M, dk, Eigen::OuterStride<>(K.q_layout.row_stride));
  const ConstMatrixMap<T> Kmat(k, N, dk, Eigen::OuterStride<>(K.k_layout.row_stride));
  const ConstMatrixMap<T> V(v, N, dk, Eigen::OuterStride<>(K.v_layout.row_stride));
  const ConstMatrixMap<T> Gm(g, M, dk, Eigen::OuterStride<>(buffers.grad_layout.row_stride));
  MatrixMap<T> GQ(gq, M, dk, Eigen::OuterStride<>(buffers.gq_layout.row_stride));
  MatrixMap<T> GK(gk, N, dk, Eigen::OuterStride<>(buffers.gk_layout.row_stride));
  MatrixMap<T> GV(gv, N, dk, Eigen::OuterStride<>(buffers.gv_layout.row_stride));
  const T* a = K.weights + K.head_offset(b, h);
  const T* a_prime = K.dropped ? K.dropped + K.head_offset(b, h) : a;  // a' (= a without dropout)
  const T* before = K.before(h);
  const T* after = K.after(h);
  // gW, ga, gs and gP are one buffer (each step turns one into the next in place), named by the step that made it.
  T* const ga = S.g_pairs.data();
  MatrixMap<T> GA(ga, M, N, Eigen::OuterStride<>(N));
  // gT[δ, D, (j)] of this head, indexed by direction_distance_index·width: each pair's gC is added to its entry.
  T* gT = S.gT.data();
  std::fill(S.gT.begin(), S.gT.end(), T(0));

  // 1. through o = W·v:  ∂L/∂v = Wᵀ·g,  ∂L/∂W = g·vᵀ;  W = a' (plain) or a' ⊙ C (PCM-V)
  if (!K.options.pcmv) {
    GV.noalias() = ConstMatrixMap<T>(a_prime, M, N, Eigen::OuterStride<>(N)).transpose() * Gm;
    GA.noalias() = Gm * V.transpose();  // ga = g·vᵀ
  } else if (K.use == TableUse::coefficient) {
    T* W = S.W.data();
    for (int64_t m = 0; m < M; ++m) {
      const int64_t end = K.visible_end(b, m);
      for (int64_t n = 0; n < end; ++n) W[m * N + n] = a_prime[m * N + n] * *Kernel<T>::entry(before, after, m, n, 1);
      for (int64_t n = end; n < N; ++n) W[m * N + n] = 0;
    }
    T* const gW = ga;  // the buffer holds gW first
    GV.noalias() = ConstMatrixMap<T>(W, M, N, Eigen::OuterStride<>(N)).transpose() * Gm;
    MatrixMap<T>(gW, M, N, Eigen::OuterStride<>(N)).noalias() = Gm * V.transpose();  // gW = g·vᵀ
    for (int64_t m = 0; m < M; ++m) {
      const int64_t end = K.visible_end(b, m);
      for (int64_t n = 0; n < end; ++n) {
        const T c = *Kernel<T>::entry(before, after, m, n, 1);
        gT[K.direction_distance_index(m, n)] += gW[m * N + n] * a_prime[m * N + n];  // gC += gW · a'
        ga[m * N + n] = gW[m * N + n] * c;                                           // ga = gW · C
      }
    }
  } else {
    // agf-f: o[m,j] = Σ_n a'[m,n]·C[j]·v[n,j]
    //   ∂L/∂a'[m,n] = Σ_j g[m,j]·C[j]·v[n,j]   (along each row, with vᵀ and the expanded table)
    //   ∂L/∂v[n,j]  = Σ_m a'[m,n]·C[j]·g[m,j]  (over the queries of each key)
    //   ∂L/∂C[j]   += a'·g[m,j]·v[n,j]          (with the score part, in step 3)
    T* vt = S.transposed.data();
    MatrixMap<T>(vt, dk, N, Eigen::OuterStride<>(N)) = V.transpose();
    for (int64_t m = 0; m < M; ++m) {
      sum_over_features(g + m * buffers.grad_layout.row_stride, K.expanded_row(h, 0), K.expanded_stride,
                        K.g.distances - 1 - m, vt, N, dk, K.visible_end(b, m), N, ga + m * N);
    }
    for (int64_t n = 0; n < N; ++n) {
      sum_over_pairs<T>(
          dk, M,
          [&](int64_t m, T& weight, const T*& c, const T*& y) {
            weight = a_prime[m * N + n];
            c = Kernel<T>::entry(before, after, m, n, width);
            y = g + m * buffers.grad_layout.row_stride;
          },
          gv + n * buffers.gv_layout.row_stride);
    }
  }

  // 2. through a' = dropout(a) and a = softmax(s):  gs = a'⊙ga - a·Σ_n a'⊙ga   (masked: 0), in place
  T* const gs = ga;
  for (int64_t m = 0; m < M; ++m) {
    const int64_t end = K.visible_end(b, m);
    T* gs_row = gs + m * N;  // holds ga's row until it is overwritten
    const T* a_row = a + m * N;
    const T* a_prime_row = a_prime + m * N;
    T total = 0;
    for (int64_t n = 0; n < end; ++n) total += a_prime_row[n] * gs_row[n];
    for (int64_t n = 0; n < end; ++n) gs_row[n] = a_prime_row[n] * gs_row[n] - a_row[n] * total;
    for (int64_t n = end; n < N; ++n) gs_row[n] = 0;
  }

  // 3. through the score
  if (K.use == TableUse::feature_coefficient) {
    // s[m,n] = (1/√dk)·Σ_j q[m,j]·k[n,j]·C[j]
    //   ∂L/∂q[m,j] = (1/√dk)·Σ_n gs·C[j]·k[n,j],   ∂L/∂k[n,j] = (1/√dk)·Σ_m gs·C[j]·q[m,j]
    for (int64_t m = 0; m < M; ++m) {
      sum_over_pairs<T>(
          dk, K.visible_end(b, m),
          [&](int64_t n, T& weight, const T*& c, const T*& y) {
            weight = K.scale * gs[m * N + n];
            c = Kernel<T>::entry(before, after, m, n, width);
            y = k + n * K.k_layout.row_stride;
          },
          gq + m * buffers.gq_layout.row_stride);
    }
    for (int64_t n = 0; n < N; ++n) {
      sum_over_pairs<T>(
          dk, M,
          [&](int64_t m, T& weight, const T*& c, const T*& y) {
            weight = K.scale * gs[m * N + n];
            c = Kernel<T>::entry(before, after, m, n, width);
            y = q + m * K.q_layout.row_stride;
          },
          gk + n * buffers.gk_layout.row_stride);
    }
    //   ∂L/∂C(δ,D,j) = Σ over the diagonal |m - n| = D of  (1/√dk)·gs·q[m,j]·k[n,j]  (+ a'·g[m,j]·v[n,j] with PCM-V):
    //   along a diagonal C is one row, so each (δ, D) is summed in registers and written once.
    constexpr int64_t block = Accumulator<T>::kWidth;
    const bool pcmv = K.options.pcmv;
    for (int64_t direction = 0; direction < 2; ++direction) {
      for (int64_t distance = direction; distance < K.g.distances; ++distance) {
        // pairs (m, n) with n = m - D (δ = 0) or n = m + D (δ = 1), inside [0, M) × [0, N)
        const int64_t first = direction == 0 ? distance : 0;
        const int64_t last = direction == 0 ? std::min(M, N + distance) : std::min(M, N - distance);
        if (first >= last) continue;
        T* gT_row = gT + (direction * K.g.distances + distance) * width;
        auto pair = [&](int64_t m, T& score_weight, T& value_weight, int64_t& n) {
          n = direction == 0 ? m - distance : m + distance;
          score_weight = K.scale * gs[m * N + n];
          value_weight = pcmv ? a_prime[m * N + n] : T(0);
        };
        int64_t jb = 0;
        for (; jb + block <= dk; jb += block) {
          Accumulator<T> acc;
          for (int64_t m = first; m < last; ++m) {
            T score_weight, value_weight;
            int64_t n;
            pair(m, score_weight, value_weight, n);
            if (score_weight == T(0) && value_weight == T(0)) continue;
            acc.add2(score_weight, q + m * K.q_layout.row_stride + jb, k + n * K.k_layout.row_stride + jb, value_weight,
                     g + m * buffers.grad_layout.row_stride + jb, v + n * K.v_layout.row_stride + jb);
          }
          acc.store(gT_row + jb);
        }
        for (int64_t j = jb; j < dk; ++j) {  // the tail features
          T total = 0;
          for (int64_t m = first; m < last; ++m) {
            T score_weight, value_weight;
            int64_t n;
            pair(m, score_weight, value_weight, n);
            total += score_weight * q[m * K.q_layout.row_stride + j] * k[n * K.k_layout.row_stride + j] +
                     value_weight * g[m * buffers.grad_layout.row_stride + j] * v[n * K.v_layout.row_stride + j];
          }
          gT_row[j] = total;
        }
      }
    }
    return;
  }
  if (K.use == TableUse::coefficient) {
    // s = P·C:  gC = gs·P,  gP = gs·C (in place)
    const T* p = K.scaled_dot + K.head_offset(b, h);
    for (int64_t m = 0; m < M; ++m) {
      const int64_t end = K.visible_end(b, m);
      for (int64_t n = 0; n < end; ++n) {
        gT[K.direction_distance_index(m, n)] += gs[m * N + n] * p[m * N + n];
        gs[m * N + n] *= *Kernel<T>::entry(before, after, m, n, 1);
      }
    }
  } else if (K.use == TableUse::bias) {
    // s = P + bias:  gC = gs (the bias's gradient),  gP = gs
    for (int64_t m = 0; m < M; ++m) {
      const int64_t end = K.visible_end(b, m);
      for (int64_t n = 0; n < end; ++n) gT[K.direction_distance_index(m, n)] += gs[m * N + n];
    }
  }
  // P = (1/√dk)·q·kᵀ:  gq = (1/√dk)·gP·k,  gk = (1/√dk)·gPᵀ·q
  const ConstMatrixMap<T> GP(gs, M, N, Eigen::OuterStride<>(N));  // the buffer now holds gP
  GQ.noalias() = K.scale * (GP * Kmat);
  GK.noalias() = K.scale * (GP.transpose() * Q);
}

// Threads for a call: one when the work is too small to pay for spawning them.
int threads_for(const Geometry& g) {
  const int64_t work = g.batch * g.heads * g.queries * g.keys * g.head_dim;
  return work >= (1 << 16) ? omp_get_max_threads() : 1;
}

template <class T>
Kernel<T> make_kernel(const Geometry& g, const AttentionOptions& options, const Tensor& key_lengths,
                      const Tensor& table, const Tensor& q, const Tensor& k, const Tensor& v) {
  Kernel<T> K;
  K.g = g;
  K.options = options;
  K.use = table_use(options.scheme);
  K.scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(g.head_dim)));
  K.lengths = key_lengths_of(key_lengths, g);
  if (table.defined()) {
    const std::vector<double> values = table.to_double_vector();
    K.table.assign(values.begin(), values.end());
  }
  if (K.use == TableUse::feature_coefficient) {
    // E[h, j, t] = C(δ, h, D, j) with t = n - m + distances - 1: δ = 0, D = distances-1-t for t <= distances-1,
    // δ = 1, D = t - (distances-1) above.
    const int64_t distances = g.distances, dk = g.head_dim;
    K.expanded_stride = 2 * distances - 1;
    K.expanded.resize(static_cast<std::size_t>(g.heads * dk * K.expanded_stride));
    for (int64_t h = 0; h < g.heads; ++h) {
      for (int64_t j = 0; j < dk; ++j) {
        T* row = K.expanded.data() + (h * dk + j) * K.expanded_stride;
        for (int64_t t = 0; t < K.expanded_stride; ++t) {
          const bool after = t > distances - 1;
          const int64_t distance = after ? t - (distances - 1) : (distances - 1) - t;
          row[t] = (after ? K.after(h) : K.before(h))[distance * dk + j];
        }
      }
    }
  }
  K.q = q.data<T>();
  K.k = k.data<T>();
  K.v = v.data<T>();
  K.q_layout = HeadLayout(q);
  K.k_layout = HeadLayout(k);
  K.v_layout = HeadLayout(v);
  return K;
}

// q and k as the kernel sees them: rotated for rope, with a unit-stride last axis.
std::pair<Tensor, Tensor> kernel_query_key(const Tensor& q, const Tensor& k, PositionalScheme scheme) {
  if (scheme == PositionalScheme::rope) return {rope_forward(q), rope_forward(k)};
  return {unit_stride_rows(q), unit_stride_rows(k)};
}

}  // namespace

// ---- the op --------------------------------------------------------------------------------------------------

AttentionForward attention_forward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                   const Tensor& key_lengths, const PositionalParameters& positional,
                                   const AttentionOptions& options) {
  AGF_CUDA_ROUTE(on_cuda("attention", q_in, k_in, v_in, key_lengths),
                 cuda::attention_forward(q_in, k_in, v_in, key_lengths, positional, options));
  const Geometry g = geometry_of(q_in, k_in, v_in, options.scheme);
  check_attention_options(options);
  const PositionalTableShape table_shape{g.heads, g.head_dim, g.distances};
  AttentionForward result;
  result.saved.table = positional_table_forward(positional, options, table_shape);
  // Named tensors, not a structured binding: clang before 16 cannot capture a binding in the lambda below.
  const std::pair<Tensor, Tensor> query_key = kernel_query_key(q_in, k_in, options.scheme);
  const Tensor& q = query_key.first;
  const Tensor& k = query_key.second;
  const Tensor v = unit_stride_rows(v_in);
  const DType dtype = q.dtype();
  result.output = heads_interleaved(g.batch, g.heads, g.queries, g.head_dim, dtype, q.device());
  const Shape pairs_shape{g.batch, g.heads, g.queries, g.keys};
  result.saved.weights = Tensor::empty(pairs_shape, dtype, q.device());
  if (options.dropout > 0) result.saved.dropped_weights = Tensor::empty(pairs_shape, dtype, q.device());
  if (table_use(options.scheme) == TableUse::coefficient) {
    result.saved.scaled_dot = Tensor::empty(pairs_shape, dtype, q.device());
  }
  dispatch_floating(dtype, "attention", [&]<class T>() {
    Kernel<T> K = make_kernel<T>(g, options, key_lengths, result.saved.table, q, k, v);
    K.weights = result.saved.weights.data<T>();
    K.dropped = options.dropout > 0 ? result.saved.dropped_weights.data<T>() : nullptr;
    K.scaled_dot = result.saved.scaled_dot.defined() ? result.saved.scaled_dot.data<T>() : nullptr;
    T* out = result.output.data<T>();
    const HeadLayout out_layout(result.output);
#pragma omp parallel num_threads(threads_for(g))
    {
      ForwardScratch<T> scratch;
      if (options.pcmv && K.use == TableUse::coefficient)
        scratch.W.resize(static_cast<std::size_t>(g.queries * g.keys));
      if (K.use == TableUse::feature_coefficient)
        scratch.transposed.resize(static_cast<std::size_t>(g.head_dim * g.keys));
#pragma omp for schedule(static)
      for (int64_t bh = 0; bh < g.batch * g.heads; ++bh) {
        forward_head(K, bh / g.heads, bh % g.heads, out, out_layout, scratch);
      }
    }
  });
  return result;
}

AttentionGradients attention_backward(const Tensor& grad_in, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                      const Tensor& key_lengths, const PositionalParameters& positional,
                                      const AttentionOptions& options, const AttentionSaved& saved) {
  AGF_CUDA_ROUTE(on_cuda("attention_backward", grad_in, q_in, k_in, v_in, key_lengths),
                 cuda::attention_backward(grad_in, q_in, k_in, v_in, key_lengths, positional, options, saved));
  const Geometry g = geometry_of(q_in, k_in, v_in, options.scheme);
  check_attention_options(options);
  check_attention_gradient(grad_in, q_in, g);
  AGF_CHECK(saved.weights.defined(), "attention_backward: the saved weights of the forward are missing");
  // Named tensors, not a structured binding: clang before 16 cannot capture a binding in the lambda below.
  const std::pair<Tensor, Tensor> query_key = kernel_query_key(q_in, k_in, options.scheme);
  const Tensor& q = query_key.first;
  const Tensor& k = query_key.second;
  const Tensor v = unit_stride_rows(v_in);
  const Tensor grad = unit_stride_rows(grad_in);
  const DType dtype = q.dtype();
  const TableUse use = table_use(options.scheme);
  AttentionGradients grads;
  // Every row of every gradient is written (not accumulated) by exactly one (b, h).
  Tensor gq = heads_interleaved(g.batch, g.heads, g.queries, g.head_dim, dtype, q.device());
  Tensor gk = heads_interleaved(g.batch, g.heads, g.keys, g.head_dim, dtype, q.device());
  grads.v = heads_interleaved(g.batch, g.heads, g.keys, g.head_dim, dtype, q.device());
  const int64_t table_entries = 2 * g.distances * g.width;  // per head
  const int threads = threads_for(g);
  std::vector<std::vector<double>> thread_tables(static_cast<std::size_t>(threads));  // ∂L/∂table [H, 2, D, w]

  dispatch_floating(dtype, "attention_backward", [&]<class T>() {
    Kernel<T> K = make_kernel<T>(g, options, key_lengths, saved.table, q, k, v);
    K.weights = saved.weights.data<T>();
    K.dropped = saved.dropped_weights.defined() ? saved.dropped_weights.data<T>() : nullptr;
    K.scaled_dot = saved.scaled_dot.defined() ? saved.scaled_dot.data<T>() : nullptr;
    GradientBuffers<T> buffers;
    buffers.grad = grad.data<T>();
    buffers.grad_layout = HeadLayout(grad);
    buffers.gq = gq.data<T>();
    buffers.gk = gk.data<T>();
    buffers.gv = grads.v.data<T>();
    buffers.gq_layout = HeadLayout(gq);
    buffers.gk_layout = HeadLayout(gk);
    buffers.gv_layout = HeadLayout(grads.v);
    const bool has_table = use != TableUse::none;
#pragma omp parallel num_threads(threads)
    {
      BackwardScratch<T> S;
      S.g_pairs.resize(static_cast<std::size_t>(g.queries * g.keys));
      if (options.pcmv && use == TableUse::coefficient) S.W.resize(S.g_pairs.size());
      S.gT.resize(static_cast<std::size_t>(table_entries));
      if (options.pcmv && use == TableUse::feature_coefficient)
        S.transposed.resize(static_cast<std::size_t>(g.head_dim * g.keys));
      std::vector<double>& table_grad = thread_tables[static_cast<std::size_t>(omp_get_thread_num())];
      if (has_table) table_grad.assign(static_cast<std::size_t>(g.heads * table_entries), 0.0);
#pragma omp for schedule(static)
      for (int64_t bh = 0; bh < g.batch * g.heads; ++bh) {
        const int64_t b = bh / g.heads, h = bh % g.heads;
        backward_head(K, buffers, b, h, S);
        if (has_table) {
          for (int64_t e = 0; e < table_entries; ++e) table_grad[h * table_entries + e] += S.gT[e];
        }
      }
    }
  });

  if (use != TableUse::none) {
    // Sum the threads' tables and reorder [H, 2, D, w] -> the table's [2, H, D, w].
    std::vector<double> grad_table(static_cast<std::size_t>(2 * g.heads * g.distances * g.width), 0.0);
    const int64_t per_direction = g.distances * g.width;
    for (const std::vector<double>& partial : thread_tables) {
      if (partial.empty()) continue;
      for (int64_t h = 0; h < g.heads; ++h) {
        for (int64_t direction = 0; direction < 2; ++direction) {
          for (int64_t e = 0; e < per_direction; ++e) {
            grad_table[(direction * g.heads + h) * per_direction + e] +=
                partial[h * table_entries + direction * per_direction + e];
          }
        }
      }
    }
    const Tensor grad_table_tensor = Tensor::from_vector(grad_table, saved.table.shape(), DType::f64);
    grads.positional = positional_table_backward(grad_table_tensor, positional, options,
                                                 {g.heads, g.head_dim, g.distances});
  }
  if (options.scheme == PositionalScheme::rope) {
    grads.q = rope_backward(gq);
    grads.k = rope_backward(gk);
  } else {
    grads.q = gq;
    grads.k = gk;
  }
  return grads;
}

}  // namespace agf::ops
