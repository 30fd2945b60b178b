#pragma once
// The materializing attention path as a sequence of tensor-level steps: which buffer holds what, which
// product comes when. It runs on a `Backend` — the CUDA one (cuBLAS and the kernels of
// ops/cuda/attention_materialized_kernels.cu, in ops/cuda/attention.cpp) or the tests' HostBackend
// (tests/attention/materialized_host_backend.h), which runs the same steps of ops/attention_materialized.h on
// the CPU and evaluates each product exactly as cuBLAS is asked to (column-major, through
// column_major_product), so that tests check this whole path without a GPU.
//
// A Backend provides, for T = float and double (pointers on `device`, buffers contiguous):
//   product(ColumnMajorProduct, alpha, first, second, out, batch, device)   cuBLAS's strided-batched GEMM
//   softmax_rows, coefficient_product, feature_sum_over_features / _over_keys / _over_queries,
//   softmax_backward_rows, diagonal_sums, feature_table_gradient          (ops/attention_materialized.h)
#include <cmath>

#include "core/tensor.h"
#include "ops/attention.h"
#include "ops/attention_materialized.h"

namespace agf::ops::materialized {

// f32 for f32, f16, bf16; f64 for f64.
inline DType compute_dtype(DType dtype) { return dtype == DType::f64 ? DType::f64 : DType::f32; }

// A fresh [B, H, T, dk] tensor laid out in memory as [B, T, H, dk] (see AttentionForward::output).
inline Tensor heads_interleaved(int64_t B, int64_t H, int64_t T, int64_t dk, DType dtype, Device device) {
  return Tensor::empty({B, T, H, dk}, dtype, device).permute({0, 2, 1, 3});
}

// table_use (ops/attention.h) as the kernels' ScoreTerm; agf-f's table enters through the feature steps.
inline ScoreTerm term_of(PositionalScheme scheme) {
  switch (table_use(scheme)) {
    case TableUse::bias: return ScoreTerm::bias;
    case TableUse::coefficient: return ScoreTerm::coefficient;
    case TableUse::none:
    case TableUse::feature_coefficient: break;
  }
  return ScoreTerm::none;
}

// One call: the pairs (with key_lengths pointing into `lengths`, i64 [B] on the device, or null), the options,
// and the positional table on the device in the compute dtype (undefined for none and rope).
struct Call {
  PairGeometry pairs;
  AttentionOptions options;
  Tensor table;
};

template <class T>
Attention<T> arguments(const Call& call) {
  Attention<T> A;
  A.pairs = call.pairs;
  A.table = call.table.defined() ? call.table.data<T>() : nullptr;
  A.term = term_of(call.options.scheme);
  A.dropout.enabled = call.options.dropout > 0;
  A.dropout.threshold = static_cast<float>(call.options.dropout);
  A.dropout.seed = call.options.dropout_seed;
  A.dropout.offset = call.options.dropout_offset;
  A.keep_scale = static_cast<T>(1.0 / (1.0 - call.options.dropout));
  return A;
}

// c = alpha·op(a)·op(b) over `batch` contiguous row-major matrices (see column_major_product).
template <class Backend, class T>
void product(bool trans_a, bool trans_b, int64_t rows, int64_t cols, int64_t inner, double alpha, const Tensor& a,
             const Tensor& b, const Tensor& c, int64_t batch) {
  if (rows == 0 || cols == 0 || batch == 0) return;
  if (inner == 0) {  // an empty sum
    Tensor(c).fill(0);
    return;
  }
  Backend::template product<T>(column_major_product(trans_a, trans_b, rows, cols, inner), static_cast<T>(alpha),
                               b.data<T>(), a.data<T>(), c.data<T>(), batch, c.device());
}

// The inputs of this path: contiguous, in the compute dtype.
inline Tensor compute_copy(const Tensor& t) { return t.to(compute_dtype(t.dtype())).contiguous(); }

// q, k (rotated for rope), v: [B, H, T, dk] on the device, any dtype. Saves a, a', P and the table.
template <class Backend>
AttentionForward forward(const Call& call, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in) {
  const DType dtype = q_in.dtype(), compute = compute_dtype(dtype);
  const Device device = q_in.device();
  const Tensor q = compute_copy(q_in), k = compute_copy(k_in), v = compute_copy(v_in);
  const PairGeometry& P = call.pairs;
  const int64_t B = P.batch, H = P.heads, BH = B * H, M = P.queries, N = P.keys, dk = P.head_dim;
  const bool per_feature = is_per_feature(call.options.scheme), pcmv = call.options.pcmv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  AttentionForward result;
  AttentionSaved& saved = result.saved;
  saved.table = call.table;
  saved.weights = Tensor::empty({B, H, M, N}, compute, device);
  if (call.options.dropout > 0) saved.dropped_weights = Tensor::empty(saved.weights.shape(), compute, device);
  if (term_of(call.options.scheme) == ScoreTerm::coefficient)
    saved.scaled_dot = Tensor::empty(saved.weights.shape(), compute, device);
  const Tensor out = Tensor::empty({B, H, M, dk}, compute, device);
  dispatch_floating(compute, "attention", [&]<class T>() {
    const Attention<T> A = arguments<T>(call);
    T* dropped = saved.dropped_weights.defined() ? saved.dropped_weights.data<T>() : nullptr;
    // 1. s, then a = softmax(s) and a' = dropout(a)
    if (per_feature) {
      // s = (1/√dk)·Σ_j q·C(j)·k into the weights, turned into a in place
      Backend::template feature_sum_over_features<T>(A, q.data<T>(), k.data<T>(), static_cast<T>(scale),
                                                     saved.weights.data<T>(), device);
      Backend::template softmax_rows<T>(A, saved.weights.data<T>(), saved.weights.data<T>(), dropped, device);
    } else {
      // P = (1/√dk)·q·kᵀ (kept when a coefficient multiplies it); s = P·C, P + bias or P inside the row step
      const Tensor& p = saved.scaled_dot.defined() ? saved.scaled_dot : saved.weights;
      product<Backend, T>(false, true, M, N, dk, scale, q, k, p, BH);
      Backend::template softmax_rows<T>(A, p.data<T>(), saved.weights.data<T>(), dropped, device);
    }
    // 2. o = Σ_n a'·v; with PCM-V, W = a' ⊙ C then W·v (scalar C), or the per-feature sum (agf-f)
    const Tensor& w = saved.dropped_weights.defined() ? saved.dropped_weights : saved.weights;
    if (!pcmv) {
      product<Backend, T>(false, false, M, dk, N, 1.0, w, v, out, BH);
    } else if (per_feature) {
      Backend::template feature_sum_over_keys<T>(A, w.data<T>(), v.data<T>(), T(1), out.data<T>(), device);
    } else {
      const Tensor x = Tensor::empty(w.shape(), compute, device);
      Backend::template coefficient_product<T>(A, w.data<T>(), x.data<T>(), device);
      product<Backend, T>(false, false, M, dk, N, 1.0, x, v, out, BH);
    }
  });
  result.output = heads_interleaved(B, H, M, dk, dtype, device);
  result.output.copy_from(out);
  return result;
}

// Fills grads.q, grads.k (before rope's transpose), grads.v in the inputs' dtype; returns ∂L/∂table in the
// compute dtype (undefined without a table).
template <class Backend>
Tensor backward(const Call& call, const Tensor& grad_in, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                const AttentionSaved& saved, AttentionGradients& grads) {
  const DType dtype = q_in.dtype(), compute = compute_dtype(dtype);
  const Device device = q_in.device();
  const PairGeometry& P = call.pairs;
  const int64_t B = P.batch, H = P.heads, BH = B * H, M = P.queries, N = P.keys, dk = P.head_dim;
  const Shape pairs_shape{B, H, M, N};
  AGF_CHECK(saved.weights.defined() && saved.weights.shape() == pairs_shape && saved.weights.dtype() == compute,
            "attention_backward: the saved weights of the forward are missing or do not match the call");
  AGF_CHECK(term_of(call.options.scheme) != ScoreTerm::coefficient ||
                (saved.scaled_dot.defined() && saved.scaled_dot.shape() == pairs_shape &&
                 saved.scaled_dot.dtype() == compute),
            "attention_backward: the saved scaled dot products P of the forward are missing or do not match the call");
  const Tensor q = compute_copy(q_in), k = compute_copy(k_in), v = compute_copy(v_in), grad = compute_copy(grad_in);
  const bool per_feature = is_per_feature(call.options.scheme), pcmv = call.options.pcmv;
  const bool scalar_table = saved.table.defined() && !per_feature;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  const Tensor gq = Tensor::empty({B, H, M, dk}, compute, device);
  const Tensor gk = Tensor::empty({B, H, N, dk}, compute, device);
  const Tensor gv = Tensor::empty({B, H, N, dk}, compute, device);
  const Tensor ga = Tensor::empty(pairs_shape, compute, device);  // ∂L/∂W or ∂L/∂a', then ∂L/∂P
  const Tensor pair_grad = scalar_table ? Tensor::empty(pairs_shape, compute, device) : Tensor();
  const Tensor grad_table = saved.table.defined() ? Tensor::empty(saved.table.shape(), compute, device) : Tensor();
  dispatch_floating(compute, "attention_backward", [&]<class T>() {
    Call table_call = call;
    table_call.table = saved.table;
    const Attention<T> A = arguments<T>(table_call);
    const Tensor& w = saved.dropped_weights.defined() ? saved.dropped_weights : saved.weights;  // a'
    const T* dropped = saved.dropped_weights.defined() ? saved.dropped_weights.data<T>() : nullptr;
    // 1. through o = W·v:  ∂L/∂v = Wᵀ·g,  ∂L/∂W = g·vᵀ  (agf-f with PCM-V: the per-feature sums)
    if (!pcmv) {
      product<Backend, T>(true, false, N, dk, M, 1.0, w, grad, gv, BH);
      product<Backend, T>(false, true, M, N, dk, 1.0, grad, v, ga, BH);
    } else if (per_feature) {
      Backend::template feature_sum_over_features<T>(A, grad.data<T>(), v.data<T>(), T(1), ga.data<T>(), device);
      Backend::template feature_sum_over_queries<T>(A, w.data<T>(), grad.data<T>(), T(1), gv.data<T>(), device);
    } else {
      const Tensor x = Tensor::empty(pairs_shape, compute, device);
      Backend::template coefficient_product<T>(A, w.data<T>(), x.data<T>(), device);
      product<Backend, T>(true, false, N, dk, M, 1.0, x, grad, gv, BH);
      product<Backend, T>(false, true, M, N, dk, 1.0, grad, v, ga, BH);
    }
    // 2. through dropout and softmax (and a scalar C in s = P·C): ga becomes ∂L/∂P
    Backend::template softmax_backward_rows<T>(A, saved.weights.data<T>(), dropped,
                                               saved.scaled_dot.defined() ? saved.scaled_dot.data<T>() : nullptr,
                                               pcmv && !per_feature, ga.data<T>(),
                                               pair_grad.defined() ? pair_grad.data<T>() : nullptr, device);
    // 3. ∂L/∂table, then through P = (1/√dk)·q·kᵀ (agf-f: the per-feature sums, ga being ∂L/∂s)
    if (scalar_table) Backend::template diagonal_sums<T>(A, pair_grad.data<T>(), grad_table.data<T>(), device);
    if (per_feature) {
      Backend::template feature_table_gradient<T>(A, ga.data<T>(), q.data<T>(), k.data<T>(),
                                                  pcmv ? w.data<T>() : nullptr, grad.data<T>(), v.data<T>(),
                                                  static_cast<T>(scale), grad_table.data<T>(), device);
      Backend::template feature_sum_over_keys<T>(A, ga.data<T>(), k.data<T>(), static_cast<T>(scale), gq.data<T>(),
                                                 device);
      Backend::template feature_sum_over_queries<T>(A, ga.data<T>(), q.data<T>(), static_cast<T>(scale), gk.data<T>(),
                                                    device);
    } else {
      product<Backend, T>(false, false, M, dk, N, scale, ga, k, gq, BH);
      product<Backend, T>(true, false, N, dk, M, scale, ga, q, gk, BH);
    }
  });
  grads.q = heads_interleaved(B, H, M, dk, dtype, device);
  grads.k = heads_interleaved(B, H, N, dk, dtype, device);
  grads.v = heads_interleaved(B, H, N, dk, dtype, device);
  grads.q.copy_from(gq);
  grads.k.copy_from(gk);
  grads.v.copy_from(gv);
  return grad_table;
}

}  // namespace agf::ops::materialized
