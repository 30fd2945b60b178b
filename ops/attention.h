#pragma once
// Scaled dot-product attention with every positional scheme of SPEC-AGF §3–5 in one op, forward beside
// its hand-written backward. The derivation, step by step, is docs/agf-backprop.md; the names below
// (s, a, C, P, ga, gs, gC) are the names used there.
//
//   P[b,h,m,n] = (1/√dk) · Σ_j q[b,h,m,j] · k[b,h,n,j]                       (plain scaled dot product)
//   s          = P · C(δ,h,D)        coefficient schemes (agf-b, agf-m, alibi-mult)
//              = (1/√dk) Σ_j q·k·C(δ,h,D,j)                                    (agf-f, per feature)
//              = P + bias(δ,h,D)    bias schemes (alibi, t5, kerple-log, kerple-power)
//              = P                  none, rope (rope rotates q and k first)
//   s          = -inf where n >= key_length[b] or (causal) n > m
//   a          = softmax_n(s)        (a row whose keys are all masked is a = 0)
//   a'         = dropout(a)          (Philox (seed, offset), element index = row-major [b,h,m,n])
//   o[b,h,m,j] = Σ_n a' · v                 without PCM-V
//              = Σ_n a' · C(·,j) · v        with PCM-V (the same C as in the score)
//
// Where m is the query position, n the key position (both from 0), d = m - n, δ = [n > m], D = |d|.
// The positional coefficient/bias is computed once per (δ, h, D) by positional_table_forward
// (ops/attention_positional.h) and gathered; its gradient is scattered back by positional_table_backward.
#include <array>
#include <cstdint>
#include <string_view>

#include "core/tensor.h"

namespace agf::ops {

enum class PositionalScheme : uint8_t {
  none,
  rope,
  alibi,
  alibi_mult,
  t5,
  kerple_log,
  kerple_power,
  agf_b,
  agf_m,
  agf_f
};

inline constexpr std::array<PositionalScheme, 10> kPositionalSchemes = {
    PositionalScheme::none,  PositionalScheme::rope,       PositionalScheme::alibi,        PositionalScheme::alibi_mult,
    PositionalScheme::t5,    PositionalScheme::kerple_log, PositionalScheme::kerple_power, PositionalScheme::agf_b,
    PositionalScheme::agf_m, PositionalScheme::agf_f};

std::string_view scheme_name(PositionalScheme scheme);            // "agf-m", "kerple-log", ...
PositionalScheme parse_positional_scheme(std::string_view name);  // the names above; error lists them

// How a scheme's positional table enters the score, said once (table_use); the predicates below and the GPU
// kernels' fused::ScoreTerm (ops/attention_fused.h) are read off it.
enum class TableUse : uint8_t {
  none,                 // s = P                          none, rope (rope rotates q and k instead)
  bias,                 // s = P + bias(δ,h,D)            alibi, t5, kerple-log, kerple-power
  coefficient,          // s = P · C(δ,h,D)               alibi-mult, agf-b, agf-m (PCM-V applies)
  feature_coefficient,  // s = Σ_j q·k·C(δ,h,D,j) / √dk   agf-f: C carries the feature index j (LC3; PCM-V applies)
};
TableUse table_use(PositionalScheme scheme);

bool has_coefficient(PositionalScheme scheme);   // coefficient or feature_coefficient: alibi-mult, agf-b/m/f
bool has_score_bias(PositionalScheme scheme);    // bias: alibi, t5, kerple-log, kerple-power
bool is_per_feature(PositionalScheme scheme);    // feature_coefficient: agf-f
bool is_gravitational(PositionalScheme scheme);  // agf-b, agf-m, agf-f: C = LC1 · lc2 · lc3

// ---- the positional parameters, described once ----------------------------------------------------------
// kPositionalParameterTable says, for each parameter an attention module may own, its name, its shape and
// which schemes own it; the value structs below, autograd's inputs (autograd/attention.cpp), the gradient
// checks (autograd/attention_checks.cpp), the modules (nn/positional/schemes.cpp) and the op's validation
// (check_positional_parameters) all read it. H heads, L = AttentionOptions::max_distance, dk the head size.
//
//   name      shape           owned by
//   G, rho    [2, H]          agf-b, agf-m, agf-f   LC1's amplitude and 1/r, per direction δ and head
//   k         [1]             agf-b, agf-m, agf-f   LC1's exponent, only when learnable (else AttentionOptions::k)
//   lc2       [2, H, L]       agf-m, agf-f          LC2, per table index i = min(D, L-1)
//   lc3       [2, H, L, dk]   agf-f                 LC3, per index and feature j
//   t5_table  [32, H]         t5                    one bias per (bucket, head), as T5's nn.Embedding(32, H)
//   r1, r2    [H]             kerple-log, -power
enum class PositionalParameter : uint8_t { G, rho, k, lc2, lc3, t5_table, r1, r2 };

struct PositionalParameterSpec {
  PositionalParameter id;
  std::string_view name;  // as errors, gradient checks and `agf inspect` say it
  Shape (*shape)(int64_t heads, int64_t max_distance, int64_t head_dim);
  bool (*owned_by)(PositionalScheme scheme);
  bool optional;  // absent even where owned (k: when not learnable)
};

// Every parameter, in the order of PositionalParameter (autograd's inputs 3, 4, ... follow it).
extern const std::array<PositionalParameterSpec, 8> kPositionalParameterTable;

const PositionalParameterSpec& positional_parameter(PositionalParameter id);
const PositionalParameterSpec& positional_parameter(std::string_view name);  // error naming the known names

// One value per positional parameter (a Tensor here, a Variable in autograd/attention.h), named as in the
// table; those the scheme lacks stay empty (undefined).
template <class Value>
struct PositionalSet {
  Value G, rho, k, lc2, lc3, t5_table, r1, r2;

  Value& operator[](PositionalParameter id) {
    switch (id) {
      case PositionalParameter::G: return G;
      case PositionalParameter::rho: return rho;
      case PositionalParameter::k: return k;
      case PositionalParameter::lc2: return lc2;
      case PositionalParameter::lc3: return lc3;
      case PositionalParameter::t5_table: return t5_table;
      case PositionalParameter::r1: return r1;
      case PositionalParameter::r2: break;
    }
    return r2;
  }
  const Value& operator[](PositionalParameter id) const { return const_cast<PositionalSet&>(*this)[id]; }
};

// The parameters' values for the op: any floating dtype and layout; gradients come back in each
// parameter's own dtype and shape.
using PositionalParameters = PositionalSet<Tensor>;

struct AttentionOptions {
  PositionalScheme scheme = PositionalScheme::none;
  bool pcmv = false;                              // apply the coefficient to the values too (coefficient schemes only)
  bool causal = false;                            // mask n > m (decoder self-attention)
  int64_t max_distance = 256;                     // L: lc2/lc3 are indexed by i = min(D, L-1)
  double k = 2.0;                                 // the LC1 exponent when PositionalParameters::k is undefined
  double dropout = 0.0;                           // on the attention weights a (not on C); 0 = off
  uint64_t dropout_seed = 0, dropout_offset = 0;  // the Philox stream of the dropout mask
};

// What the backward needs from the forward. The CPU op and the materializing CUDA kernel fill the first
// four (on a GPU: a, a', P and the table in f32, or f64 for f64 inputs); the fused CUDA kernel keeps no
// [Tq, Tk] tensor and fills table, output and row_logsumexp instead (ops/cuda/attention.h).
struct AttentionSaved {
  Tensor weights;          // a  [B, H, Tq, Tk]
  Tensor dropped_weights;  // a' [B, H, Tq, Tk] (only when dropout > 0)
  Tensor scaled_dot;       // P  [B, H, Tq, Tk] (only for agf-b, agf-m, alibi-mult: ∂L/∂C needs it)
  Tensor table;            // the positional table (f64 on the CPU), see positional_table_forward
  // Fused CUDA kernel only (undefined otherwise):
  Tensor output;         // o, the forward's output: the backward's Δ[m] = Σ_j g[m,j]·o[m,j]
  Tensor row_logsumexp;  // [B, H, Tq] ln Σ_n exp(s[m,n]) over the visible keys (+inf for a row with none), f32
                         // (f64 for f64): the backward recomputes a = exp(s - row_logsumexp)
};

struct AttentionForward {
  Tensor output;  // o [B, H, Tq, dk]: a view whose memory is laid out [B, Tq, H, dk], so merging the heads
                  // back into [B, Tq, H·dk] (permute + reshape) copies nothing
  AttentionSaved saved;
};

// q [B, H, Tq, dk], k and v [B, H, Tk, dk] (f32 or f64 on the CPU, also f16 and bf16 on a GPU; any layout with
// a unit-stride last axis — others are copied). CUDA tensors run on the GPU (ops/cuda/attention.h). key_lengths: [B] i32/i64 with 0 <= length <= Tk, keys at n >= length are padding; an
// undefined tensor means no padding.
AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_lengths,
                                   const PositionalParameters& positional, const AttentionOptions& options);

struct AttentionGradients {
  Tensor q, k, v;                   // same shapes as the inputs
  PositionalParameters positional;  // defined for each defined parameter
};

// grad = ∂L/∂o [B, H, Tq, dk]. The derivation is docs/agf-backprop.md; in short, with W = a' (⊙ C with PCM-V):
//   ∂L/∂v  = Wᵀ·g,   ∂L/∂a' = g·vᵀ (⊙ C),   ∂L/∂s = a'⊙∂L/∂a' - a·Σ_n(a'⊙∂L/∂a'),
//   ∂L/∂q  = (1/√dk)·(∂L/∂s ⊙ C)·k,   ∂L/∂k = (1/√dk)·(∂L/∂s ⊙ C)ᵀ·q,
//   ∂L/∂C  = ∂L/∂s ⊙ P (+ ∂L/∂W ⊙ a' with PCM-V), summed per (δ, h, D) and handed to positional_table_backward.
AttentionGradients attention_backward(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                      const Tensor& key_lengths, const PositionalParameters& positional,
                                      const AttentionOptions& options, const AttentionSaved& saved);

}  // namespace agf::ops
