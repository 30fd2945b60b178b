#pragma once
// Configurations of the attention op for tests that compare an implementation with the CPU op in f64:
// random inputs and positional parameters for every scheme, the reference forward + backward, and an error
// measure relative to each tensor's scale. Used by the CPU emulation of the fused kernels
// (test_attention_fused_host.cpp) and by the GPU tests (tests/cuda/test_attention_cuda.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/random.h"
#include "ops/attention.h"
#include "ops/attention_positional.h"

namespace agf::testing {

struct AttentionCase {
  int64_t batch = 2, heads = 2, queries = 17, keys = 17, head_dim = 32;
  ops::PositionalScheme scheme = ops::PositionalScheme::none;
  bool pcmv = false, causal = false, padding = false;
  double dropout = 0;
  int64_t max_distance = 8;  // L < T in most cases: the clamped table index is exercised
  bool empty_row = false;    // the last sequence has key length 0 (a = 0 on every row)
  uint64_t seed = 1;

  std::string name() const {
    std::ostringstream s;
    s << ops::scheme_name(scheme) << (pcmv ? "+pcmv" : "") << (causal ? " causal" : "") << (padding ? " padded" : "")
      << (dropout > 0 ? " dropout" : "") << (empty_row ? " empty-row" : "") << " B=" << batch << " H=" << heads
      << " Tq=" << queries << " Tk=" << keys << " dk=" << head_dim;
    return s.str();
  }
  ops::AttentionOptions options() const {
    ops::AttentionOptions o;
    o.scheme = scheme;
    o.pcmv = pcmv;
    o.causal = causal;
    o.max_distance = max_distance;
    o.dropout = dropout;
    o.dropout_seed = 1234 + seed;
    o.dropout_offset = 77;
    return o;
  }
};

// Every scheme, with PCM-V off and (coefficient schemes) on.
inline std::vector<std::pair<ops::PositionalScheme, bool>> scheme_variants(bool include_per_feature = true) {
  std::vector<std::pair<ops::PositionalScheme, bool>> out;
  for (ops::PositionalScheme scheme : ops::kPositionalSchemes) {
    if (!include_per_feature && ops::is_per_feature(scheme)) continue;
    out.emplace_back(scheme, false);
    if (ops::has_coefficient(scheme)) out.emplace_back(scheme, true);
  }
  return out;
}

// Every scheme (× PCM-V) × causal × padding × dropout ∈ {0, 0.25} at one size: the grid that the CPU
// emulations and the GPU tests sweep, each case with a seed of its scheme.
inline std::vector<AttentionCase> configuration_grid(int64_t queries, int64_t keys, int64_t head_dim,
                                                     bool include_per_feature = true) {
  std::vector<AttentionCase> cases;
  for (const auto& [scheme, pcmv] : scheme_variants(include_per_feature)) {
    for (bool causal : {false, true}) {
      for (bool padding : {false, true}) {
        for (double dropout : {0.0, 0.25}) {
          AttentionCase c;
          c.scheme = scheme;
          c.pcmv = pcmv;
          c.causal = causal;
          c.padding = padding;
          c.dropout = dropout;
          c.queries = queries;
          c.keys = keys;
          c.head_dim = head_dim;
          c.seed = static_cast<uint64_t>(scheme) + 1;
          cases.push_back(c);
        }
      }
    }
  }
  return cases;
}

inline Tensor random_f64(const Shape& shape, uint64_t seed, double low, double high) {
  Generator generator(seed);
  return uniform(shape, generator, low, high, DType::f64);
}

struct AttentionInputs {
  Tensor q, k, v, grad, key_lengths;  // f64 on the CPU; key_lengths undefined without padding
  ops::PositionalParameters positional;
};

inline AttentionInputs make_inputs(const AttentionCase& c) {
  using ops::PositionalScheme;
  const int64_t B = c.batch, H = c.heads, dk = c.head_dim, L = c.max_distance;
  const uint64_t s = c.seed * 1000;
  AttentionInputs x;
  x.q = random_f64({B, H, c.queries, dk}, s + 1, -1, 1);
  x.k = random_f64({B, H, c.keys, dk}, s + 2, -1, 1);
  x.v = random_f64({B, H, c.keys, dk}, s + 3, -1, 1);
  x.grad = random_f64({B, H, c.queries, dk}, s + 4, -1, 1);
  if (c.padding || c.empty_row) {
    std::vector<int64_t> lengths;
    for (int64_t b = 0; b < B; ++b) lengths.push_back(c.padding ? std::max<int64_t>(1, c.keys - 3 * b - 2) : c.keys);
    if (c.empty_row) lengths.back() = 0;
    x.key_lengths = Tensor::from_vector(lengths, {B});
  }
  const PositionalScheme scheme = c.scheme;
  ops::PositionalParameters& p = x.positional;
  const bool gravitational = scheme == PositionalScheme::agf_b || scheme == PositionalScheme::agf_m ||
                             scheme == PositionalScheme::agf_f;
  if (gravitational) {
    p.G = random_f64({2, H}, s + 10, 0.5, 1.5);
    p.rho = random_f64({2, H}, s + 11, 0.05, 0.5);
    p.k = random_f64({1}, s + 12, 1.5, 2.5);
  }
  if (scheme == PositionalScheme::agf_m || scheme == PositionalScheme::agf_f)
    p.lc2 = random_f64({2, H, L}, s + 13, 0.5, 1.5);
  if (scheme == PositionalScheme::agf_f) p.lc3 = random_f64({2, H, L, dk}, s + 14, 0.5, 1.5);
  if (scheme == PositionalScheme::t5) p.t5_table = random_f64({ops::kT5Buckets, H}, s + 15, -1, 1);
  if (scheme == PositionalScheme::kerple_log || scheme == PositionalScheme::kerple_power) {
    p.r1 = random_f64({H}, s + 16, 0.3, 1.5);
    p.r2 = random_f64({H}, s + 17, 0.3, 1.5);
  }
  return x;
}

// The inputs as a 16-bit (or f32) copy holds them, back in f64: the reference for a kernel that stores q, k, v and
// ∂L/∂o in `dtype`, so that comparing with it measures the kernel's arithmetic, not the rounding of its inputs.
inline AttentionInputs rounded_to(const AttentionInputs& x, DType dtype) {
  AttentionInputs r = x;
  for (Tensor* t : {&r.q, &r.k, &r.v, &r.grad}) *t = t->to(dtype).to(DType::f64);
  return r;
}

struct AttentionResult {
  Tensor output;
  ops::AttentionGradients grads;
};

// The CPU op in f64: the reference.
inline AttentionResult cpu_reference(const AttentionCase& c, const AttentionInputs& x) {
  const ops::AttentionOptions options = c.options();
  ops::AttentionForward forward = ops::attention_forward(x.q, x.k, x.v, x.key_lengths, x.positional, options);
  AttentionResult r;
  r.output = forward.output;
  r.grads = ops::attention_backward(x.grad, x.q, x.k, x.v, x.key_lengths, x.positional, options, forward.saved);
  return r;
}

// max |x - reference| / max(max |reference|, least_scale). Both on any device and dtype; compared in f64 on
// the host. NaN anywhere gives +inf. least_scale: a tensor that is 0 in exact arithmetic holds rounding noise,
// which has the size of the terms that cancel, not of the (zero) result; see zero_gradient_scale.
inline double scaled_error(const Tensor& x, const Tensor& reference, double least_scale = 1e-3) {
  REQUIRE(x.defined());
  REQUIRE(x.shape() == reference.shape());
  const std::vector<double> a = x.to(Device::cpu()).to_double_vector();
  const std::vector<double> b = reference.to(Device::cpu()).to_double_vector();
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double difference = std::abs(a[i] - b[i]);
    if (std::isnan(difference)) return INFINITY;
    worst = std::max(worst, difference);
    scale = std::max(scale, std::abs(b[i]));
  }
  return worst / std::max(scale, least_scale);
}

// The least scale of scaled_error for case `c`. With one key a row's softmax is 1 whatever its score, so
// ∂L/∂q, ∂L/∂k and every positional gradient are 0 in exact arithmetic: ∂L/∂s = a·(a'·ga/a − D) with
// D = Σ ∂L/∂o·o cancels. In f32 the cancellation leaves eps·|ga|·dk ≈ 1e-6 (ga = ∂L/∂o·v, a sum of dk
// products of O(1) inputs; with dropout, o = v/(1-p) is rounded before D is formed), so those tensors are
// measured against the inputs' scale, 1. (Keyed on the case's key count: padding that leaves one valid key
// in every row of a longer case would need the same.) Otherwise 1e-3: a gradient below that is small
// against the O(1) inputs, and judged relative to 1e-3.
inline double zero_gradient_scale(const AttentionCase& c) { return c.keys == 1 ? 1.0 : 1e-3; }

// Every tensor of `result` within `tolerance` (scaled_error) of the reference: o, ∂L/∂q, ∂L/∂k, ∂L/∂v and the
// gradient of each positional parameter.
inline void require_matches(const AttentionCase& c, const AttentionResult& result, const AttentionResult& reference,
                            double tolerance) {
  const double least_scale = zero_gradient_scale(c);
  auto check = [&](const char* what, const Tensor& x, const Tensor& y) {
    if (!y.defined()) {
      CHECK(!x.defined());
      return;
    }
    const double error = scaled_error(x, y, least_scale);
    INFO(what << ": scaled error " << error << " (tolerance " << tolerance << ")");
    CHECK(error <= tolerance);
  };
  check("o", result.output, reference.output);
  check("dq", result.grads.q, reference.grads.q);
  check("dk", result.grads.k, reference.grads.k);
  check("dv", result.grads.v, reference.grads.v);
  const ops::PositionalParameters& p = result.grads.positional;
  const ops::PositionalParameters& r = reference.grads.positional;
  check("dG", p.G, r.G);
  check("drho", p.rho, r.rho);
  check("dk (exponent)", p.k, r.k);
  check("dlc2", p.lc2, r.lc2);
  check("dlc3", p.lc3, r.lc3);
  check("dt5_table", p.t5_table, r.t5_table);
  check("dr1", p.r1, r.r1);
  check("dr2", p.r2, r.r2);
}

}  // namespace agf::testing
