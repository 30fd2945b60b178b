#pragma once
// Launchers of the CUDA attention kernels: raw pointers and sizes in, work queued on the device's stream
// (current_stream). Plain C++, so the tensor-level op (ops/cuda/attention.cpp) calls them.
//
//   fused         ops/cuda/attention_fused_kernels.cu — the block algorithms of ops/attention_fused.h on the
//                 GPU: no [Tq, Tk] matrix in global memory. f64, f32, f16, bf16; scalar positional terms.
//   materialized  ops/cuda/attention_materialized_kernels.cu — the per-row and per-element steps of
//                 ops/attention_materialized.h around the cuBLAS products, when scores [B, H, Tq, Tk] are kept
//                 (agf-f, dk > 256): f32 and f64.
#include <cstdint>
#include <string>

#include "core/element_type.h"
#include "ops/attention_fused.h"
#include "ops/attention_materialized.h"

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
// Each runs its step of ops/attention_materialized.h over a whole call (see there for what each computes):
// row steps one block of 256 threads per row (or per table entry), element steps one thread per output element.

template <class T>
void attention_softmax_rows(const materialized::Attention<T>& A, const T* scores, T* weights, T* dropped, int device);
template <class T>
void attention_coefficient_product(const materialized::Attention<T>& A, const T* weights, T* out, int device);
template <class T>
void attention_feature_sum_over_features(const materialized::Attention<T>& A, const T* x, const T* y, T scale, T* out,
                                         int device);
template <class T>
void attention_feature_sum_over_keys(const materialized::Attention<T>& A, const T* w, const T* y, T scale, T* out,
                                     int device);
template <class T>
void attention_feature_sum_over_queries(const materialized::Attention<T>& A, const T* w, const T* y, T scale, T* out,
                                        int device);
template <class T>
void attention_softmax_backward_rows(const materialized::Attention<T>& A, const T* weights, const T* dropped,
                                     const T* scaled_dot, bool value_coefficient, T* grad, T* pair_table_grad,
                                     int device);
template <class T>
void attention_diagonal_sums(const materialized::Attention<T>& A, const T* pair_values, T* grad_table, int device);
template <class T>
void attention_feature_table_gradient(const materialized::Attention<T>& A, const T* score_grad, const T* q, const T* k,
                                      const T* dropped, const T* g, const T* v, T scale, T* grad_table, int device);

}  // namespace agf::ops::cuda
