// The attention op on CUDA tensors (see ops/cuda/attention.h): checks, the positional table, rope, the
// choice between the fused and the materializing kernels, and — for the latter — the cuBLAS products.
#include "ops/cuda/attention.h"

#include "ops/rope.h"

#include <cublas_v2.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda/runtime.h"
#include "ops/attention_fused.h"
#include "ops/attention_geometry.h"
#include "ops/attention_materialized_steps.h"
#include "ops/attention_positional.h"
#include "ops/cuda/attention_kernels.h"
#include "ops/cuda/index_check_kernels.h"
#include "ops/cuda/positional_table_kernels.h"
#include "ops/reduce.h"

namespace agf::ops::cuda {

namespace {

using fused::ScoreTerm;
using materialized::compute_dtype;
using materialized::heads_interleaved;
using materialized::term_of;

using Geometry = AttentionGeometry;

// key_lengths as the kernels read them: i64 [B] on q's device (undefined = no padding). Checked on the
// device by a deferred scan (ops/cuda/index_check_kernels.h): a length outside [0, Tk] is reported at the
// host's next synchronisation, and the kernels meanwhile clamp it (PairGeometry::key_length). The kernels
// dereference it, so it must be on q's device already: ops::attention_forward's route checks that, a
// direct call of this file's entry points did not.
Tensor device_key_lengths(const Tensor& key_lengths, const Tensor& q, const Geometry& g) {
  if (!key_lengths.defined()) return Tensor();
  check_same_device(key_lengths, q, "attention");
  AGF_CHECK(is_integer(key_lengths.dtype()) && key_lengths.dim() == 1 && key_lengths.size(0) == g.batch,
            "attention: key_lengths must be an integer tensor [{}] (one length per sequence), got {}", g.batch,
            key_lengths.description());
  const Tensor lengths = key_lengths.to(DType::i64).contiguous();
  const int device = q.device().index;
  const Tensor scan = Tensor::empty({2}, DType::i64, q.device());
  const ::agf::cuda::DeferredCheck check = ::agf::cuda::register_deferred_check(
      device, fmt::format("attention: key length {{value}} of sequence {{position}} is outside [0, {}]", g.keys));
  ::agf::cuda::scan_indices_deferred(DType::i64, lengths.raw_data(), g.batch, g.keys + 1, false, 0,
                                     static_cast<unsigned long long*>(scan.raw_data()), check, device);
  return lengths;
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

// ---- the positional table ----------------------------------------------------------------------------------
// The gravitational schemes (agf-b, agf-m, agf-f) compute their table and its backward on the device, in
// double (positional_table_kernels.cu): no host round trip in a training step. The other schemes use the
// CPU's functions: alibi and alibi-mult have no parameters (the table is made on the host and uploaded,
// no wait); t5 and kerple read their few parameters back (one host wait per table and per gradient).

// The gravitational parameters in f64 on their device, contiguous, as the kernels read them.
struct GravitationalParameters {
  Tensor G, rho, k, lc2, lc3;
};

GravitationalParameters gravitational_f64(const PositionalParameters& p, Device device) {
  auto wide = [&](const Tensor& t) {
    if (!t.defined()) return Tensor();
    AGF_CHECK(t.device() == device, "attention: a positional parameter is on {} but the attention runs on {} ({})",
              t.device().name(), device.name(), t.description());
    return t.to(DType::f64).contiguous();
  };
  return {wide(p.G), wide(p.rho), wide(p.k), wide(p.lc2), wide(p.lc3)};
}

::agf::cuda::GravitationalTable describe(const GravitationalParameters& p, const AttentionOptions& options,
                                         const Geometry& g) {
  ::agf::cuda::GravitationalTable t;
  t.heads = g.heads;
  t.distances = g.distances;
  t.max_distance = options.max_distance;
  t.width = is_per_feature(options.scheme) ? g.head_dim : 1;
  t.G = p.G.data<double>();
  t.rho = p.rho.data<double>();
  t.lc2 = p.lc2.defined() ? p.lc2.data<double>() : nullptr;
  t.lc3 = p.lc3.defined() ? p.lc3.data<double>() : nullptr;
  t.k_pointer = p.k.defined() ? p.k.data<double>() : nullptr;
  t.k_value = options.k;
  return t;
}

// The positional table on `device` in the compute dtype (undefined for none and rope).
Tensor device_table(const PositionalParameters& positional, const AttentionOptions& options, const Geometry& g,
                    Device device, DType compute) {
  if (is_gravitational(options.scheme)) {
    check_positional_parameters(positional, options, g.table_shape());
    const GravitationalParameters p = gravitational_f64(positional, device);
    const Shape shape = is_per_feature(options.scheme) ? Shape{2, g.heads, g.distances, g.head_dim}
                                                       : Shape{2, g.heads, g.distances};
    Tensor table = Tensor::empty(shape, DType::f64, device);
    ::agf::cuda::launch_gravitational_table(describe(p, options, g), table.data<double>(), device.index);
    return table.to(compute);
  }
  const Tensor table = positional_table_forward(on_host(positional), options, g.table_shape());
  return table.defined() ? table.to(compute).to(device) : Tensor();
}

// ∂L/∂table (on the device) to the parameters, each gradient on its parameter's device in its dtype.
PositionalParameters positional_gradients(const Tensor& grad_table, const PositionalParameters& positional,
                                          const AttentionOptions& options, const Geometry& g) {
  if (!grad_table.defined()) return {};
  PositionalParameters grads;
  if (is_gravitational(options.scheme)) {
    const Device device = grad_table.device();
    const GravitationalParameters p = gravitational_f64(positional, device);
    const Tensor gT = grad_table.to(DType::f64).contiguous();
    auto like = [&](const Tensor& parameter) {
      return parameter.defined() ? Tensor::empty(parameter.shape(), DType::f64, device) : Tensor();
    };
    Tensor gG = like(p.G), grho = like(p.rho), gk_parts = like(p.G), glc2 = like(p.lc2), glc3 = like(p.lc3);
    ::agf::cuda::launch_gravitational_table_backward(describe(p, options, g), gT.data<double>(), gG.data<double>(),
                                                     grho.data<double>(), gk_parts.data<double>(),
                                                     glc2.defined() ? glc2.data<double>() : nullptr,
                                                     glc3.defined() ? glc3.data<double>() : nullptr, device.index);
    auto in_dtype_of = [](const Tensor& grad, const Tensor& parameter) {
      return parameter.defined() ? grad.to(parameter.dtype()) : Tensor();
    };
    grads.G = in_dtype_of(gG, positional.G);
    grads.rho = in_dtype_of(grho, positional.rho);
    if (positional.k.defined()) grads.k = in_dtype_of(ops::sum(gk_parts).reshape({1}), positional.k);
    grads.lc2 = in_dtype_of(glc2, positional.lc2);
    grads.lc3 = in_dtype_of(glc3, positional.lc3);
    return grads;
  }
  const Tensor host_grad = grad_table.to(Device::cpu()).to(DType::f64);
  grads = positional_table_backward(host_grad, on_host(positional), options, g.table_shape());
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

Tensor unit_stride_rows(const Tensor& t) { return t.strides()[3] == 1 ? t : t.contiguous(); }

// q and k as the kernels see them: rotated for rope, with a unit-stride last axis.
std::pair<Tensor, Tensor> kernel_query_key(const Tensor& q, const Tensor& k, PositionalScheme scheme) {
  if (scheme == PositionalScheme::rope) return {rope_forward(q), rope_forward(k)};  // routes to ops/cuda/rope
  return {unit_stride_rows(q), unit_stride_rows(k)};
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
  result.saved.output = sixteen_bit
                            ? Tensor::empty({g.batch, g.heads, g.queries, g.head_dim}, compute_dtype(dtype), device)
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
            "attention_backward: the saved row log-sum-exp {} does not match the call",
            saved.row_logsumexp.description());
  const Tensor delta = Tensor::empty({g.batch, g.heads, g.queries}, compute_dtype(dtype), device);
  grads.q = heads_interleaved(g.batch, g.heads, g.queries, g.head_dim, dtype, device);
  grads.k = heads_interleaved(g.batch, g.heads, g.keys, g.head_dim, dtype, device);
  grads.v = heads_interleaved(g.batch, g.heads, g.keys, g.head_dim, dtype, device);
  const Tensor grad_table = saved.table.defined() ? Tensor::zeros(saved.table.shape(), compute_dtype(dtype), device)
                                                  : Tensor();
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

// ---- the materializing path: its steps (ops/attention_materialized_steps.h) on cuBLAS and the CUDA kernels ------------

struct CudaBackend {
  // cuBLAS's strided-batched GEMM with the arguments column_major_product worked out. f32 products use f32
  // arithmetic (CUBLAS_COMPUTE_32F: no TF32), to stay within 1e-5 of the CPU.
  template <class T>
  static void product(const materialized::ColumnMajorProduct& p, T alpha, const T* first, const T* second, T* out,
                      int64_t batch, Device device) {
    agf::cuda::DeviceGuard guard(device.index);
    constexpr bool is_double = std::is_same_v<T, double>;
    const cudaDataType_t type = is_double ? CUDA_R_64F : CUDA_R_32F;
    const cublasComputeType_t compute = is_double ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    const T beta = 0;
    AGF_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        agf::cuda::cublas_handle(device.index), p.transpose_first ? CUBLAS_OP_T : CUBLAS_OP_N,
        p.transpose_second ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(p.m), static_cast<int>(p.n),
        static_cast<int>(p.k), &alpha, first, type, static_cast<int>(p.ld_first), p.stride_first, second, type,
        static_cast<int>(p.ld_second), p.stride_second, &beta, out, type, static_cast<int>(p.ld_out), p.stride_out,
        static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT));
  }
  template <class T>
  static void softmax_rows(const materialized::Attention<T>& A, const T* scores, T* weights, T* dropped,
                           Device device) {
    attention_softmax_rows<T>(A, scores, weights, dropped, device.index);
  }
  template <class T>
  static void softmax_backward_rows(const materialized::Attention<T>& A, const T* weights, const T* dropped,
                                    const T* scaled_dot, bool value_coefficient, T* grad, T* pair_table_grad,
                                    Device device) {
    attention_softmax_backward_rows<T>(A, weights, dropped, scaled_dot, value_coefficient, grad, pair_table_grad,
                                       device.index);
  }
  template <class T>
  static void diagonal_sums(const materialized::Attention<T>& A, const T* pair_values, T* grad_table, Device device) {
    attention_diagonal_sums<T>(A, pair_values, grad_table, device.index);
  }
  template <class T>
  static void coefficient_product(const materialized::Attention<T>& A, const T* weights, T* out, Device device) {
    attention_coefficient_product<T>(A, weights, out, device.index);
  }
  template <class T>
  static void feature_sum_over_features(const materialized::Attention<T>& A, const T* x, const T* y, T scale, T* out,
                                        Device device) {
    attention_feature_sum_over_features<T>(A, x, y, scale, out, device.index);
  }
  template <class T>
  static void feature_sum_over_keys(const materialized::Attention<T>& A, const T* w, const T* y, T scale, T* out,
                                    Device device) {
    attention_feature_sum_over_keys<T>(A, w, y, scale, out, device.index);
  }
  template <class T>
  static void feature_sum_over_queries(const materialized::Attention<T>& A, const T* w, const T* y, T scale, T* out,
                                       Device device) {
    attention_feature_sum_over_queries<T>(A, w, y, scale, out, device.index);
  }
  template <class T>
  static void feature_table_gradient(const materialized::Attention<T>& A, const T* score_grad, const T* q, const T* k,
                                     const T* dropped, const T* g, const T* v, T scale, T* grad_table, Device device) {
    attention_feature_table_gradient<T>(A, score_grad, q, k, dropped, g, v, scale, grad_table, device.index);
  }
};

materialized::Call materialized_call(const Geometry& g, const AttentionOptions& options, const Tensor& lengths,
                                     const Tensor& table) {
  return {pair_geometry(g, options, lengths), options, table};
}

std::string fused_unfit_reason(DType dtype, int64_t head_dim, const AttentionOptions& options, int device) {
  if (is_per_feature(options.scheme)) return "agf-f's coefficient carries the feature index";
  return fused_attention_unfit(dtype, head_dim, device);
}

}  // namespace

AttentionKernel attention_kernel_for(const Tensor& q, const AttentionOptions& options, AttentionKernel requested) {
  AGF_CHECK(q.defined() && q.dim() == 4 && q.device().is_cuda(),
            "attention: q must be a [B, H, T, dk] CUDA tensor, got {}", q.defined() ? q.description() : "undefined");
  if (requested == AttentionKernel::materialized) return requested;
  const std::string why = fused_unfit_reason(q.dtype(), q.size(3), options, q.device().index);
  if (why.empty()) return AttentionKernel::fused;
  AGF_CHECK(requested != AttentionKernel::fused, "attention: the fused CUDA kernel cannot serve this call: {}", why);
  return AttentionKernel::materialized;
}

AttentionForward attention_forward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                   const Tensor& key_lengths, const PositionalParameters& positional,
                                   const AttentionOptions& options, AttentionKernel kernel) {
  const Geometry g = attention_geometry(q_in, k_in, v_in, options.scheme);
  check_attention_options(options);
  const Device device = q_in.device();
  const Tensor table = device_table(positional, options, g, device, compute_dtype(q_in.dtype()));
  const Tensor lengths = device_key_lengths(key_lengths, q_in, g);
  const auto [q, k] = kernel_query_key(q_in, k_in, options.scheme);
  const Tensor v = unit_stride_rows(v_in);
  if (attention_kernel_for(q_in, options, kernel) == AttentionKernel::fused) {
    return fused_forward(g, options, lengths, table, q, k, v);
  }
  return materialized::forward<CudaBackend>(materialized_call(g, options, lengths, table), q, k, v);
}

AttentionGradients attention_backward(const Tensor& grad_in, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                      const Tensor& key_lengths, const PositionalParameters& positional,
                                      const AttentionOptions& options, const AttentionSaved& saved) {
  const Geometry g = attention_geometry(q_in, k_in, v_in, options.scheme);
  check_attention_options(options);
  check_attention_gradient(grad_in, q_in, g);
  // The kernels read the saved tensors through raw pointers: saved values from another device (or the CPU op's)
  // would hand them host pointers, and a scheme's missing table a null one (a sticky illegal-address error).
  for (const Tensor* t :
       {&saved.weights, &saved.dropped_weights, &saved.scaled_dot, &saved.table, &saved.output, &saved.row_logsumexp}) {
    if (t->defined()) check_same_device(*t, q_in, "attention_backward");
  }
  AGF_CHECK(saved.table.defined() == (has_coefficient(options.scheme) || has_score_bias(options.scheme)),
            "attention_backward: the saved positional table does not match the scheme {}", scheme_name(options.scheme));
  const Tensor lengths = device_key_lengths(key_lengths, q_in, g);
  const auto [q, k] = kernel_query_key(q_in, k_in, options.scheme);
  const Tensor v = unit_stride_rows(v_in);
  const Tensor grad = unit_stride_rows(grad_in);
  AttentionGradients grads;
  const Tensor grad_table = saved.row_logsumexp.defined()
                                ? fused_backward(g, options, lengths, grad, q, k, v, saved, grads)
                                : materialized::backward<CudaBackend>(
                                      materialized_call(g, options, lengths, saved.table), grad, q, k, v, saved, grads);
  grads.positional = positional_gradients(grad_table, positional, options, g);
  if (options.scheme == PositionalScheme::rope) {
    grads.q = rope_backward(grads.q);
    grads.k = rope_backward(grads.k);
  }
  return grads;
}

}  // namespace agf::ops::cuda
