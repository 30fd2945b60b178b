#pragma once
// Launchers of the CUDA attention kernels: raw pointers and sizes in, work queued on the device's stream
// (current_stream). Plain C++, so the tensor-level op (ops/cuda/attention.cpp) calls them.
//
//   fused         ops/cuda/attention_fused_kernels.cu — the block algorithms of ops/attention_fused.h on the
//                 GPU: no [Tq, Tk] matrix in global memory. f64, f32, f16, bf16; scalar positional terms.
//   materialized  ops/cuda/attention_materialized_kernels.cu — the per-row and per-pair steps around the
//                 cuBLAS products when scores [B, H, Tq, Tk] are kept (agf-f, dk > 256): f32 and f64.
#include <cstdint>
#include <string>

#include "core/element_type.h"
#include "ops/attention_fused.h"

namespace agf::ops::cuda {

// ---- fused -----------------------------------------------------------------------------------------------------

// "" when the fused kernels serve this storage type and head size on `device`, else why not (dk > 256, or
// the device's opt-in shared memory per block is smaller than a tile needs).
std::string fused_attention_unfit(DType dtype, int64_t head_dim, int device);

// T: double, float, Half, BFloat16 (the agf storage types; the kernels use CUDA's 16-bit types).
// Forward: writes A.out and A.row_logsumexp.
template <class T>
void fused_attention_forward(const fused::FusedAttention<T, fused::compute_t<T>>& A, int device);
// Backward: Δ into A.delta, then ∂L/∂k, ∂L/∂v (and += into A.grad_table, which must be zeroed) and ∂L/∂q.
template <class T>
void fused_attention_backward(const fused::FusedAttention<T, fused::compute_t<T>>& A, int device);

// ---- materialized (T = float or double; every buffer contiguous) ---------------------------------------------------

template <class T>
struct MaterializedAttention {
  fused::PairGeometry pairs;
  const T* table = nullptr;                     // [2, H, distances] (scalar) or [2, H, distances, dk] (per feature)
  fused::ScoreTerm term = fused::ScoreTerm::none;  // how a scalar table enters s (none for agf-f)
  fused::DropoutMask dropout;
  T keep_scale = 1;
};

// Row by row (one block per (b, h, m)): s = P·C, P + bias or P over the visible keys (scores is P, or the
// finished agf-f score when A.term is none), a = softmax, a' = dropout(a); masked keys get a = a' = 0.
// weights may alias scores. dropped may be null (no dropout).
template <class T>
void attention_softmax_rows(const MaterializedAttention<T>& A, const T* scores, T* weights, T* dropped, int device);

// out[b,h,m,n] = w·C(δ,h,D) for visible pairs, 0 elsewhere (the PCM-V weights W = a' ⊙ C).
template <class T>
void attention_coefficient_product(const MaterializedAttention<T>& A, const T* weights, T* out, int device);

// The agf-f products with a per-feature table C(δ,h,D,j), each a sum over one index:
//   over features  out[m,n] = scale·Σ_j x[m,j]·C(m,n,j)·y[n,j]   (visible pairs; 0 elsewhere)  x [B,H,Tq,dk], y [B,H,Tk,dk]
//   over keys      out[m,j] = scale·Σ_n w[m,n]·C(m,n,j)·y[n,j]    (visible keys of row m)        y [B,H,Tk,dk]
//   over queries   out[n,j] = scale·Σ_m w[m,n]·C(m,n,j)·y[m,j]    (queries that see key n)       y [B,H,Tq,dk]
template <class T>
void attention_feature_sum_over_features(const MaterializedAttention<T>& A, const T* x, const T* y, T scale, T* out,
                                         int device);
template <class T>
void attention_feature_sum_over_keys(const MaterializedAttention<T>& A, const T* w, const T* y, T scale, T* out,
                                     int device);
template <class T>
void attention_feature_sum_over_queries(const MaterializedAttention<T>& A, const T* w, const T* y, T scale, T* out,
                                        int device);

// Row by row, the softmax backward (docs/agf-backprop.md §3–5). grad holds ∂L/∂a' on entry — or ∂L/∂W when
// value_coefficient (PCM-V with a scalar C), turned into ∂L/∂a' = ∂L/∂W·C here — and ∂L/∂P on exit
// (∂L/∂s·C for a coefficient, ∂L/∂s otherwise). pair_table_grad (may be null) receives ∂L/∂C or ∂L/∂bias of
// each pair (0 where masked): gs·P (+ ∂L/∂W·a'), or gs. dropped null = no dropout; scaled_dot (P) is needed
// for a coefficient.
template <class T>
void attention_softmax_backward_rows(const MaterializedAttention<T>& A, const T* weights, const T* dropped,
                                     const T* scaled_dot, bool value_coefficient, T* grad, T* pair_table_grad,
                                     int device);

// grad_table[δ,h,D] = Σ_b Σ_{pairs with that δ, D} pair_values[b,h,m,n]: one block per table entry, a fixed
// order of summation (deterministic). Overwrites grad_table [2, H, distances].
template <class T>
void attention_diagonal_sums(const MaterializedAttention<T>& A, const T* pair_values, T* grad_table, int device);

// agf-f: grad_table[δ,h,D,j] = Σ_b Σ_{pairs} scale·gs·q[m,j]·k[n,j] (+ a'·g[m,j]·v[n,j] when dropped is not
// null: PCM-V). One block per (δ, h, D), threads over j; overwrites grad_table [2, H, distances, dk].
template <class T>
void attention_feature_table_gradient(const MaterializedAttention<T>& A, const T* score_grad, const T* q,
                                      const T* k, const T* dropped, const T* g, const T* v, T scale, T* grad_table,
                                      int device);

// ---- rope ------------------------------------------------------------------------------------------------------------

// out[row, 2i] = x[2i]·cos - x[2i+1]·sin, out[row, 2i+1] = x[2i]·sin + x[2i+1]·cos with (cos, sin) =
// cos_sin[t, i, 0..1], t = row % length: the rotation of ops::rope_forward (sin negated for the backward).
// in, out: contiguous [rows, head_dim] of `dtype`; cos_sin: [length, head_dim/2, 2] in the compute type.
void attention_rotate_pairs(DType dtype, const void* in, void* out, int64_t rows, int64_t length, int64_t head_dim,
                            const void* cos_sin, int device);

}  // namespace agf::ops::cuda
