// The attention op on CUDA tensors (see ops/cuda/attention.h): checks, the positional table, rope, the
// choice between the fused and the materializing kernels, and — for the latter — the cuBLAS products.
#include "ops/cuda/attention.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/runtime.h"
#include "ops/attention_fused.h"
#include "ops/attention_positional.h"
#include "ops/cuda/attention_kernels.h"

namespace agf::ops::cuda {

namespace {

using fused::ScoreTerm;

struct Geometry {
  int64_t batch = 0, heads = 0, queries = 0, keys = 0, head_dim = 0, distances = 1;
  PositionalTableShape table_shape() const { return {heads, head_dim, distances}; }
};

// The checks of the CPU op, with the same messages, and the device.
Geometry geometry_of(const Tensor& q, const Tensor& k, const Tensor& v) {
  AGF_CHECK(q.defined() && k.defined() && v.defined(), "attention: q, k and v must be defined");
  AGF_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "attention: q, k, v must be [B, H, T, dk], got {}, {}, {}",
            q.description(), k.description(), v.description());
  check_same_device(q, k, "attention");
  check_same_device(q, v, "attention");
  check_same_dtype(q, k, "attention");
  check_same_dtype(q, v, "attention");
  AGF_CHECK(is_floating(q.dtype()), "attention: q, k, v must be floating point, got {}", q.description());
  AGF_CHECK(k.shape() == v.shape(), "attention: k {} and v {} must have the same shape", k.description(), v.description());
  AGF_CHECK(q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3),
            "attention: q {} and k {} must agree in batch, heads and head size", q.description(), k.description());
  Geometry g;
  g.batch = q.size(0);
  g.heads = q.size(1);
  g.queries = q.size(2);
  g.keys = k.size(2);
  g.head_dim = q.size(3);
  g.distances = std::max<int64_t>({g.queries, g.keys, 1});
  return g;
}

void check_options(const AttentionOptions& options) {
  AGF_CHECK(options.dropout >= 0.0 && options.dropout < 1.0, "attention: dropout must be in [0, 1), got {}",
            options.dropout);
}

// f32 for f32, f16, bf16; f64 for f64.
DType compute_dtype(DType dtype) { return dtype == DType::f64 ? DType::f64 : DType::f32; }

ScoreTerm term_of(PositionalScheme scheme) {
  if (is_per_feature(scheme)) return ScoreTerm::none;  // agf-f's table enters through the feature kernels
  if (has_coefficient(scheme)) return ScoreTerm::coefficient;
  if (has_score_bias(scheme)) return ScoreTerm::bias;
  return ScoreTerm::none;
}

// key_lengths as the kernels read them: i64 [B] on the device (undefined = no padding). Checked on the host
// (B numbers come back: one small synchronisation).
Tensor device_key_lengths(const Tensor& key_lengths, const Geometry& g) {
  if (!key_lengths.defined()) return Tensor();
  AGF_CHECK(is_integer(key_lengths.dtype()) && key_lengths.dim() == 1 && key_lengths.size(0) == g.batch,
            "attention: key_lengths must be an integer tensor [{}] (one length per sequence), got {}", g.batch,
            key_lengths.description());
  const std::vector<int64_t> lengths = key_lengths.to_int_vector();
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    AGF_CHECK(lengths[b] >= 0 && lengths[b] <= g.keys, "attention: key length {} of sequence {} is outside [0, {}]",
              lengths[b], b, g.keys);
  }
  return key_lengths.to(DType::i64).contiguous();
}

PositionalParameters on_host(const PositionalParameters& p) {
  auto host = [](const Tensor& t) { return t.defined() ? t.to(Device::cpu()) : Tensor(); };
  PositionalParameters out;
  out.G = host(p.G);
  out.rho = host(p.rho);
  out.k = host(p.k);
  out.lc2 = host(p.lc2);
  out.lc3 = host(p.lc3);
  out.t5_table = host(p.t5_table);
  out.r1 = host(p.r1);
  out.r2 = host(p.r2);
  return out;
}

// The positional table (computed and checked on the host, in f64), on `device` in the compute dtype.
Tensor device_table(const PositionalParameters& positional, const AttentionOptions& options, const Geometry& g,
                    Device device, DType compute) {
  const Tensor table = positional_table_forward(on_host(positional), options, g.table_shape());
  return table.defined() ? table.to(compute).to(device) : Tensor();
}

// ∂L/∂table (on the device) to the parameters: positional_table_backward on the host, each gradient moved
// to its parameter's device.
PositionalParameters positional_gradients(const Tensor& grad_table, const PositionalParameters& positional,
                                          const AttentionOptions& options, const Geometry& g) {
  if (!grad_table.defined()) return {};
  const Tensor host_grad = grad_table.to(Device::cpu()).to(DType::f64);
  PositionalParameters grads = positional_table_backward(host_grad, on_host(positional), options, g.table_shape());
  auto place = [](Tensor& grad, const Tensor& parameter) {
    if (grad.defined()) grad = grad.to(parameter.device());
  };
  place(grads.G, positional.G);
  place(grads.rho, positional.rho);
  place(grads.k, positional.k);
  place(grads.lc2, positional.lc2);
  place(grads.lc3, positional.lc3);
  place(grads.t5_table, positional.t5_table);
  place(grads.r1, positional.r1);
  place(grads.r2, positional.r2);
  return grads;
}

// RoPE on the device: the rotation of ops::rope_forward (sign +1) or its transpose (sign -1), with cos and
// sin computed on the host in double exactly as the CPU op does. (A private kernel until ops::rope_forward
// itself routes to CUDA.)
Tensor rotate(const Tensor& x_in, double sign) {
  const char* op = sign > 0 ? "rope" : "rope_backward";
  AGF_CHECK(x_in.dim() == 4, "{}: expects [B, H, T, dk], got {}", op, x_in.description());
  const int64_t length = x_in.size(2), dk = x_in.size(3);
  AGF_CHECK(dk % 2 == 0, "{}: the head size dk must be even to rotate feature pairs, got {}", op, dk);
  const Tensor x = x_in.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  const int64_t pairs = dk / 2;
  std::vector<double> cos_sin(static_cast<std::size_t>(length * pairs * 2));
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t i = 0; i < pairs; ++i) {
      const double angle =
          static_cast<double>(t) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(dk));
      cos_sin[static_cast<std::size_t>((t * pairs + i) * 2)] = std::cos(angle);
      cos_sin[static_cast<std::size_t>((t * pairs + i) * 2 + 1)] = sign * std::sin(angle);
    }
  }
  const Tensor table = Tensor::from_vector(cos_sin, {length, pairs, 2}, compute_dtype(x.dtype())).to(x.device());
  attention_rotate_pairs(x.dtype(), x.raw_data(), out.raw_data(), dk == 0 ? 0 : x.numel() / dk, length, dk,
                         table.raw_data(), x.device().index);
  return out;
}

Tensor unit_stride_rows(const Tensor& t) { return t.strides()[3] == 1 ? t : t.contiguous(); }

// q and k as the kernels see them: rotated for rope, with a unit-stride last axis.
std::pair<Tensor, Tensor> kernel_query_key(const Tensor& q, const Tensor& k, PositionalScheme scheme) {
  if (scheme == PositionalScheme::rope) return {rotate(q, 1.0), rotate(k, 1.0)};
  return {unit_stride_rows(q), unit_stride_rows(k)};
}

// A fresh [B, H, T, dk] tensor laid out in memory as [B, T, H, dk] (see AttentionForward::output).
Tensor heads_interleaved(int64_t B, int64_t H, int64_t T, int64_t dk, DType dtype, Device device) {
  return Tensor::empty({B, T, H, dk}, dtype, device).permute({0, 2, 1, 3});
}

fused::PairGeometry pair_geometry(const Geometry& g, const AttentionOptions& options, const Tensor& lengths) {
  fused::PairGeometry p;
  p.batch = g.batch;
  p.heads = g.heads;
  p.queries = g.queries;
  p.keys = g.keys;
  p.head_dim = g.head_dim;
  p.distances = g.distances;
  p.key_lengths = lengths.defined() ? lengths.data<int64_t>() : nullptr;
  p.causal = options.causal;
  return p;
}

fused::DropoutMask dropout_mask(const AttentionOptions& options) {
  fused::DropoutMask mask;
  mask.enabled = options.dropout > 0;
  mask.threshold = static_cast<float>(options.dropout);
  mask.seed = options.dropout_seed;
  mask.offset = options.dropout_offset;
  return mask;
}

template <class Pointer>
fused::HeadRows<Pointer> rows_of(const Tensor& t) {
  fused::HeadRows<Pointer> rows;
  rows.data = static_cast<Pointer>(t.raw_data());
  rows.batch_stride = t.strides()[0];
  rows.head_stride = t.strides()[1];
  rows.row_stride = t.strides()[2];
  return rows;
}

// ---- the fused kernels -----------------------------------------------------------------------------------------------

template <class T>
fused::FusedAttention<T, fused::compute_t<T>> fused_arguments(const Geometry& g, const AttentionOptions& options,
                                                              const Tensor& lengths, const Tensor& table,
                                                              const Tensor& q, const Tensor& k, const Tensor& v) {
  using Acc = fused::compute_t<T>;
  fused::FusedAttention<T, Acc> A;
  A.pairs = pair_geometry(g, options, lengths);
  A.q = rows_of<const T*>(q);
  A.k = rows_of<const T*>(k);
  A.v = rows_of<const T*>(v);
  A.table = table.defined() ? table.data<Acc>() : nullptr;
  A.term = term_of(options.scheme);
  A.pcmv = options.pcmv;
  A.scale = static_cast<Acc>(1.0 / std::sqrt(static_cast<double>(g.head_dim)));
  A.dropout = dropout_mask(options);
  A.keep_scale = static_cast<Acc>(1.0 / (1.0 - options.dropout));
  return A;
}

AttentionForward fused_forward(const Geometry& g, const AttentionOptions& options, const Tensor& lengths,
                               const Tensor& table, const Tensor& q, const Tensor& k, const Tensor& v) {
  const DType dtype = q.dtype();
  const Device device = q.device();
  AttentionForward result;
  result.output = heads_interleaved(g.batch, g.heads, g.queries, g.head_dim, dtype, device);
  result.saved.row_logsumexp = Tensor::empty({g.batch, g.heads, g.queries}, compute_dtype(dtype), device);
  // The backward's o, in the compute type: the output itself, or for 16-bit storage an f32 copy the kernel
  // writes beside it (see FusedAttention::out_compute).
  const bool sixteen_bit = compute_dtype(dtype) != dtype;
  result.saved.output = sixteen_bit ? Tensor::empty({g.batch, g.heads, g.queries, g.head_dim}, compute_dtype(dtype), device)
                                    : result.output;
  result.saved.table = table;
  dispatch_any_floating(dtype, "attention", [&]<class T>() {
    using Acc = fused::compute_t<T>;
    fused::FusedAttention<T, Acc> A = fused_arguments<T>(g, options, lengths, table, q, k, v);
    A.out = rows_of<T*>(result.output);
    if (sixteen_bit) A.out_compute = rows_of<Acc*>(result.saved.output);
    A.row_logsumexp = result.saved.row_logsumexp.data<Acc>();
    fused_attention_forward<T>(A, device.index);
  });
  return result;
}

// Returns ∂L/∂q̃, ∂L/∂k̃ (before rope's transpose), ∂L/∂v in grads, and ∂L/∂table (or undefined).
Tensor fused_backward(const Geometry& g, const AttentionOptions& options, const Tensor& lengths, const Tensor& grad,
                      const Tensor& q, const Tensor& k, const Tensor& v, const AttentionSaved& saved,
                      AttentionGradients& grads) {
  const DType dtype = q.dtype();
  const Device device = q.device();
  AGF_CHECK(saved.output.defined() && saved.output.shape() == grad.shape() && saved.output.strides()[3] == 1 &&
                saved.output.dtype() == compute_dtype(dtype),
            "attention_backward: the fused forward's saved output is missing or malformed");
  AGF_CHECK(saved.row_logsumexp.shape() == Shape({g.batch, g.heads, g.queries}) &&
                saved.row_logsumexp.dtype() == compute_dtype(dtype) && saved.row_logsumexp.is_contiguous(),
            "attention_backward: the saved row log-sum-exp {} does not match the call", saved.row_logsumexp.description());
  const Tensor delta = Tensor::empty({g.batch, g.heads, g.queries}, compute_dtype(dtype), device);
  grads.q = heads_interleaved(g.batch, g.heads, g.queries, g.head_dim, dtype, device);
  grads.k = heads_interleaved(g.batch, g.heads, g.keys, g.head_dim, dtype, device);
  grads.v = heads_interleaved(g.batch, g.heads, g.keys, g.head_dim, dtype, device);
  const Tensor grad_table = saved.table.defined() ? Tensor::zeros(saved.table.shape(), compute_dtype(dtype), device) : Tensor();
  dispatch_any_floating(dtype, "attention_backward", [&]<class T>() {
    using Acc = fused::compute_t<T>;
    fused::FusedAttention<T, Acc> A = fused_arguments<T>(g, options, lengths, saved.table, q, k, v);
    A.row_logsumexp = saved.row_logsumexp.data<Acc>();
    A.grad = rows_of<const T*>(grad);
    A.saved_out = rows_of<const Acc*>(saved.output);
    A.delta = delta.data<Acc>();
    A.grad_q = rows_of<T*>(grads.q);
    A.grad_k = rows_of<T*>(grads.k);
    A.grad_v = rows_of<T*>(grads.v);
    A.grad_table = grad_table.defined() ? grad_table.data<Acc>() : nullptr;
    fused_attention_backward<T>(A, device.index);
  });
  return grad_table;
}

// ---- the materializing path ------------------------------------------------------------------------------------------

// c = alpha·op(a)·op(b) for `batch` row-major matrices laid out one after another: op(a) [rows, inner],
// op(b) [inner, cols], c [rows, cols]; a is stored [inner, rows] when trans_a, b [cols, inner] when trans_b.
// cuBLAS is column-major, and a row-major matrix is its column-major transpose, so this is cᵀ = op(b)ᵀ·op(a)ᵀ
// with the operands swapped. f32 products use f32 arithmetic (no TF32), to match the CPU to 1e-5.
template <class T>
void batched_product(bool trans_a, bool trans_b, int64_t rows, int64_t cols, int64_t inner, double alpha,
                     const Tensor& a, const Tensor& b, const Tensor& c, int64_t batch) {
  if (rows == 0 || cols == 0 || batch == 0) return;
  if (inner == 0) {  // an empty sum
    Tensor(c).fill(0);
    return;
  }
  const int device = c.device().index;
  agf::cuda::DeviceGuard guard(device);
  constexpr bool is_double = std::is_same_v<T, double>;
  const cudaDataType_t type = is_double ? CUDA_R_64F : CUDA_R_32F;
  const cublasComputeType_t compute = is_double ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  const T alpha_value = static_cast<T>(alpha), beta_value = 0;
  const int64_t lda = trans_a ? rows : inner, ldb = trans_b ? inner : cols;
  AGF_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      agf::cuda::cublas_handle(device), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(cols), static_cast<int>(rows), static_cast<int>(inner), &alpha_value, b.raw_data(), type,
      static_cast<int>(ldb), inner * cols, a.raw_data(), type, static_cast<int>(lda), rows * inner, &beta_value,
      c.raw_data(), type, static_cast<int>(cols), rows * cols, static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT));
}

template <class T>
MaterializedAttention<T> materialized_arguments(const Geometry& g, const AttentionOptions& options,
                                                const Tensor& lengths, const Tensor& table) {
  MaterializedAttention<T> A;
  A.pairs = pair_geometry(g, options, lengths);
  A.table = table.defined() ? table.data<T>() : nullptr;
  A.term = term_of(options.scheme);
  A.dropout = dropout_mask(options);
  A.keep_scale = static_cast<T>(1.0 / (1.0 - options.dropout));
  return A;
}

// The inputs of the materializing path: contiguous, in the compute dtype.
Tensor compute_copy(const Tensor& t) { return t.to(compute_dtype(t.dtype())).contiguous(); }

AttentionForward materialized_forward(const Geometry& g, const AttentionOptions& options, const Tensor& lengths,
                                      const Tensor& table, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in) {
  const DType dtype = q_in.dtype(), compute = compute_dtype(dtype);
  const Device device = q_in.device();
  const Tensor q = compute_copy(q_in), k = compute_copy(k_in), v = compute_copy(v_in);
  const int64_t BH = g.batch * g.heads, M = g.queries, N = g.keys, dk = g.head_dim;
  const bool per_feature = is_per_feature(options.scheme);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  AttentionForward result;
  AttentionSaved& saved = result.saved;
  saved.table = table;
  saved.weights = Tensor::empty({g.batch, g.heads, M, N}, compute, device);
  if (options.dropout > 0) saved.dropped_weights = Tensor::empty(saved.weights.shape(), compute, device);
  if (term_of(options.scheme) == ScoreTerm::coefficient) saved.scaled_dot = Tensor::empty(saved.weights.shape(), compute, device);
  const Tensor out = Tensor::empty({g.batch, g.heads, M, dk}, compute, device);
  dispatch_floating(compute, "attention", [&]<class T>() {
    const MaterializedAttention<T> A = materialized_arguments<T>(g, options, lengths, table);
    T* dropped = saved.dropped_weights.defined() ? saved.dropped_weights.data<T>() : nullptr;
    // 1. s, then a = softmax(s) and a' = dropout(a)
    if (per_feature) {
      // s = (1/√dk)·Σ_j q·C(j)·k, written into the weights, turned into a in place
      attention_feature_sum_over_features<T>(A, q.data<T>(), k.data<T>(), static_cast<T>(scale), saved.weights.data<T>(),
                                             device.index);
      attention_softmax_rows<T>(A, saved.weights.data<T>(), saved.weights.data<T>(), dropped, device.index);
    } else {
      // P = (1/√dk)·q·kᵀ (kept when a coefficient multiplies it), s = P·C / P + bias / P in the row kernel
      const Tensor& p = saved.scaled_dot.defined() ? saved.scaled_dot : saved.weights;
      batched_product<T>(false, true, M, N, dk, scale, q, k, p, BH);
      attention_softmax_rows<T>(A, p.data<T>(), saved.weights.data<T>(), dropped, device.index);
    }
    // 2. o = Σ_n a'·v, with C: X = a' ⊙ C then X·v (scalar), or the per-feature sum (agf-f)
    const Tensor& w = saved.dropped_weights.defined() ? saved.dropped_weights : saved.weights;
    if (!options.pcmv) {
      batched_product<T>(false, false, M, dk, N, 1.0, w, v, out, BH);
    } else if (per_feature) {
      attention_feature_sum_over_keys<T>(A, w.data<T>(), v.data<T>(), T(1), out.data<T>(), device.index);
    } else {
      const Tensor x = Tensor::empty(w.shape(), compute, device);
      attention_coefficient_product<T>(A, w.data<T>(), x.data<T>(), device.index);
      batched_product<T>(false, false, M, dk, N, 1.0, x, v, out, BH);
    }
  });
  result.output = heads_interleaved(g.batch, g.heads, M, dk, dtype, device);
  result.output.copy_from(out);
  return result;
}

Tensor materialized_backward(const Geometry& g, const AttentionOptions& options, const Tensor& lengths,
                             const Tensor& grad_in, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                             const AttentionSaved& saved, AttentionGradients& grads) {
  const DType dtype = q_in.dtype(), compute = compute_dtype(dtype);
  const Device device = q_in.device();
  const int64_t BH = g.batch * g.heads, M = g.queries, N = g.keys, dk = g.head_dim;
  const Shape pairs_shape{g.batch, g.heads, M, N};
  AGF_CHECK(saved.weights.defined() && saved.weights.shape() == pairs_shape && saved.weights.dtype() == compute,
            "attention_backward: the saved weights of the forward are missing or do not match the call");
  const Tensor q = compute_copy(q_in), k = compute_copy(k_in), v = compute_copy(v_in), grad = compute_copy(grad_in);
  const bool per_feature = is_per_feature(options.scheme);
  const bool scalar_table = saved.table.defined() && !per_feature;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  const Tensor gq = Tensor::empty({g.batch, g.heads, M, dk}, compute, device);
  const Tensor gk = Tensor::empty({g.batch, g.heads, N, dk}, compute, device);
  const Tensor gv = Tensor::empty({g.batch, g.heads, N, dk}, compute, device);
  const Tensor ga = Tensor::empty(pairs_shape, compute, device);  // ∂L/∂W or ∂L/∂a', then ∂L/∂P
  const Tensor pair_grad = scalar_table ? Tensor::empty(pairs_shape, compute, device) : Tensor();
  const Tensor grad_table = saved.table.defined() ? Tensor::empty(saved.table.shape(), compute, device) : Tensor();
  dispatch_floating(compute, "attention_backward", [&]<class T>() {
    const MaterializedAttention<T> A = materialized_arguments<T>(g, options, lengths, saved.table);
    const Tensor& w = saved.dropped_weights.defined() ? saved.dropped_weights : saved.weights;  // a'
    const T* dropped = saved.dropped_weights.defined() ? saved.dropped_weights.data<T>() : nullptr;
    // 1. through o = W·v:  ∂L/∂v = Wᵀ·g,  ∂L/∂W = g·vᵀ  (agf-f with PCM-V: the per-feature sums)
    if (!options.pcmv) {
      batched_product<T>(true, false, N, dk, M, 1.0, w, grad, gv, BH);
      batched_product<T>(false, true, M, N, dk, 1.0, grad, v, ga, BH);
    } else if (per_feature) {
      attention_feature_sum_over_features<T>(A, grad.data<T>(), v.data<T>(), T(1), ga.data<T>(), device.index);
      attention_feature_sum_over_queries<T>(A, w.data<T>(), grad.data<T>(), T(1), gv.data<T>(), device.index);
    } else {
      const Tensor x = Tensor::empty(pairs_shape, compute, device);
      attention_coefficient_product<T>(A, w.data<T>(), x.data<T>(), device.index);
      batched_product<T>(true, false, N, dk, M, 1.0, x, grad, gv, BH);
      batched_product<T>(false, true, M, N, dk, 1.0, grad, v, ga, BH);
    }
    // 2. through dropout and softmax (and, for a scalar C, through s = P·C): ga becomes ∂L/∂P
    attention_softmax_backward_rows<T>(A, saved.weights.data<T>(), dropped,
                                       saved.scaled_dot.defined() ? saved.scaled_dot.data<T>() : nullptr,
                                       options.pcmv && !per_feature, ga.data<T>(),
                                       pair_grad.defined() ? pair_grad.data<T>() : nullptr, device.index);
    // 3. ∂L/∂table, then through P = (1/√dk)·q·kᵀ (agf-f: the per-feature sums)
    if (scalar_table) attention_diagonal_sums<T>(A, pair_grad.data<T>(), grad_table.data<T>(), device.index);
    if (per_feature) {
      attention_feature_table_gradient<T>(A, ga.data<T>(), q.data<T>(), k.data<T>(), options.pcmv ? w.data<T>() : nullptr,
                                          grad.data<T>(), v.data<T>(), static_cast<T>(scale), grad_table.data<T>(),
                                          device.index);
      attention_feature_sum_over_keys<T>(A, ga.data<T>(), k.data<T>(), static_cast<T>(scale), gq.data<T>(), device.index);
      attention_feature_sum_over_queries<T>(A, ga.data<T>(), q.data<T>(), static_cast<T>(scale), gk.data<T>(), device.index);
    } else {
      batched_product<T>(false, false, M, dk, N, scale, ga, k, gq, BH);
      batched_product<T>(true, false, N, dk, M, scale, ga, q, gk, BH);
    }
  });
  grads.q = heads_interleaved(g.batch, g.heads, M, dk, dtype, device);
  grads.k = heads_interleaved(g.batch, g.heads, N, dk, dtype, device);
  grads.v = heads_interleaved(g.batch, g.heads, N, dk, dtype, device);
  grads.q.copy_from(gq);
  grads.k.copy_from(gk);
  grads.v.copy_from(gv);
  return grad_table;
}

std::string fused_unfit_reason(DType dtype, int64_t head_dim, const AttentionOptions& options, int device) {
  if (is_per_feature(options.scheme)) return "agf-f's coefficient carries the feature index";
  return fused_attention_unfit(dtype, head_dim, device);
}

}  // namespace

AttentionKernel attention_kernel_for(const Tensor& q, const AttentionOptions& options, AttentionKernel requested) {
  AGF_CHECK(q.defined() && q.dim() == 4 && q.device().is_cuda(), "attention: q must be a [B, H, T, dk] CUDA tensor, got {}",
            q.defined() ? q.description() : "undefined");
  if (requested == AttentionKernel::materialized) return requested;
  const std::string why = fused_unfit_reason(q.dtype(), q.size(3), options, q.device().index);
  if (why.empty()) return AttentionKernel::fused;
  AGF_CHECK(requested != AttentionKernel::fused, "attention: the fused CUDA kernel cannot serve this call: {}", why);
  return AttentionKernel::materialized;
}

AttentionForward attention_forward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& key_lengths,
                                   const PositionalParameters& positional, const AttentionOptions& options,
                                   AttentionKernel kernel) {
  const Geometry g = geometry_of(q_in, k_in, v_in);
  check_options(options);
  const Device device = q_in.device();
  const Tensor table = device_table(positional, options, g, device, compute_dtype(q_in.dtype()));
  const Tensor lengths = device_key_lengths(key_lengths, g);
  const auto [q, k] = kernel_query_key(q_in, k_in, options.scheme);
  const Tensor v = unit_stride_rows(v_in);
  if (attention_kernel_for(q_in, options, kernel) == AttentionKernel::fused) {
    return fused_forward(g, options, lengths, table, q, k, v);
  }
  return materialized_forward(g, options, lengths, table, q, k, v);
}

AttentionGradients attention_backward(const Tensor& grad_in, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                      const Tensor& key_lengths, const PositionalParameters& positional,
                                      const AttentionOptions& options, const AttentionSaved& saved) {
  const Geometry g = geometry_of(q_in, k_in, v_in);
  check_options(options);
  AGF_CHECK(grad_in.defined() && grad_in.shape() == Shape({g.batch, g.heads, g.queries, g.head_dim}),
            "attention_backward: the gradient must be [{}, {}, {}, {}], got {}", g.batch, g.heads, g.queries,
            g.head_dim, grad_in.defined() ? grad_in.description() : "undefined");
  check_same_device(grad_in, q_in, "attention_backward");
  check_same_dtype(grad_in, q_in, "attention_backward");
  const Tensor lengths = device_key_lengths(key_lengths, g);
  const auto [q, k] = kernel_query_key(q_in, k_in, options.scheme);
  const Tensor v = unit_stride_rows(v_in);
  const Tensor grad = unit_stride_rows(grad_in);
  AttentionGradients grads;
  const Tensor grad_table = saved.row_logsumexp.defined()
                                ? fused_backward(g, options, lengths, grad, q, k, v, saved, grads)
                                : materialized_backward(g, options, lengths, grad, q, k, v, saved, grads);
  grads.positional = positional_gradients(grad_table, positional, options, g);
  if (options.scheme == PositionalScheme::rope) {
    grads.q = rotate(grads.q, -1.0);
    grads.k = rotate(grads.k, -1.0);
  }
  return grads;
}

}  // namespace agf::ops::cuda
