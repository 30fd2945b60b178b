#pragma once
// The attention of SPEC-AGF §3–5 composed from primitive autograd ops (matmul, mul, exp, log, softmax,
// embedding as a gather, ...), materializing every coefficient tensor — [H, M, N] or [H, M, N, dk] — and,
// for agf-f, the [B, H, M, N, dk] products. Slow and memory-hungry on purpose: it shares no code with the
// attention op (ops/cpu/attention.cpp) beyond the primitives, so agreement in values and gradients checks the
// op's hand-written backward against the chain rule applied by the engine.
#include <cmath>
#include <vector>

#include "autograd/attention_checks.h"
#include "autograd/functions.h"
#include "ops/attention_positional.h"

namespace agf::testing {

// A constant (no gradient) f64 variable.
inline Variable constant(const std::vector<double>& values, const Shape& shape) {
  return Variable(Tensor::from_vector(values, shape, DType::f64), false);
}

// RoPE written with slices: pairs (2i, 2i+1) rotated by t·10000^(-2i/dk).
inline Variable composed_rope(const Variable& x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), dk = x.size(3), pairs = dk / 2;
  std::vector<double> cosine, sine;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < pairs; ++i) {
      const double angle = static_cast<double>(t) *
                           std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(dk));
      cosine.push_back(std::cos(angle));
      sine.push_back(std::sin(angle));
    }
  }
  const Variable c = constant(cosine, {T, pairs, 1}), s = constant(sine, {T, pairs, 1});
  const Variable pairs_view = reshape(x, {B, H, T, pairs, 2});
  const Variable even = slice(pairs_view, 4, 0, 1), odd = slice(pairs_view, 4, 1, 2);
  return reshape(concat({even * c - odd * s, even * s + odd * c}, 4), {B, H, T, dk});
}

// Gathers table [2, H, entries(, w)] at index (δ(m,n), entry(m,n)) into [H, M, N(, w)] with embedding.
inline Variable gather_by_pair(const Variable& table, const std::vector<int64_t>& ids, int64_t M, int64_t N) {
  const int64_t H = table.size(1), entries = table.size(2);
  const int64_t width = table.dim() == 4 ? table.size(3) : 1;
  const Variable rows = table.dim() == 4 ? reshape(permute(table, {0, 2, 1, 3}), {2 * entries, H * width})
                                         : reshape(permute(table, {0, 2, 1}), {2 * entries, H});
  const Variable gathered = embedding(rows, Tensor::from_vector(ids, {M, N}));  // [M, N, H·w]
  if (table.dim() == 4) return permute(reshape(gathered, {M, N, H, width}), {2, 0, 1, 3});
  return permute(gathered, {2, 0, 1});
}

struct ComposedParameters {
  Variable G, rho, k, lc2, lc3, t5_table, r1, r2;
};

inline Variable composed_attention(const AttentionCheckCase& c, const std::vector<Variable>& x) {
  using ops::PositionalScheme;
  const ops::AttentionOptions& o = c.options;
  const PositionalScheme scheme = o.scheme;
  ComposedParameters p;
  const std::vector<std::string> names = positional_parameter_names(scheme, c.learnable_k);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Variable& value = x[3 + i];
    if (names[i] == "G") p.G = value;
    if (names[i] == "rho") p.rho = value;
    if (names[i] == "k") p.k = value;
    if (names[i] == "lc2") p.lc2 = value;
    if (names[i] == "lc3") p.lc3 = value;
    if (names[i] == "t5_table") p.t5_table = value;
    if (names[i] == "r1") p.r1 = value;
    if (names[i] == "r2") p.r2 = value;
  }
  const int64_t B = c.batch, H = c.heads, M = c.queries, N = c.keys, dk = c.head_dim, L = o.max_distance;
  const int64_t distances = std::max(M, N);
  Variable q = x[0], k = x[1], v = x[2];
  if (scheme == PositionalScheme::rope) {
    q = composed_rope(q);
    k = composed_rope(k);
  }
  // Pair tables: direction, distance, clamped index, for every (m, n).
  std::vector<int64_t> by_distance, by_index, t5_bucket;
  std::vector<double> distance_values;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      const int64_t direction = n > m ? 1 : 0, D = std::abs(m - n);
      by_distance.push_back(direction * distances + D);
      by_index.push_back(direction * L + std::min(D, L - 1));
      t5_bucket.push_back(ops::t5_bucket(m - n, !o.causal));
      distance_values.push_back(static_cast<double>(D));
    }
  }
  const Variable D_mn = constant(distance_values, {M, N});

  // The coefficient C [H, M, N] or [H, M, N, dk], or the bias [H, M, N].
  Variable coefficient, bias;
  if (scheme == PositionalScheme::agf_b || scheme == PositionalScheme::agf_m || scheme == PositionalScheme::agf_f) {
    std::vector<double> d_values;
    for (int64_t D = 0; D < distances; ++D) d_values.push_back(static_cast<double>(D));
    const Variable D_row = constant(d_values, {1, 1, distances});
    const Variable base = add_scalar(D_row * relu(reshape(p.rho, {2, H, 1})), 1.0);  // 1 + D·max(rho, 0)
    const Variable log_base = log(base);
    const Variable power = p.k.defined() ? exp(neg(log_base * p.k)) : exp(log_base * (-o.k));  // base^-k
    const Variable lc1 = reshape(p.G, {2, H, 1}) * power;                                      // [2, H, D]
    coefficient = gather_by_pair(lc1, by_distance, M, N);
    if (p.lc2.defined()) coefficient = coefficient * gather_by_pair(p.lc2, by_index, M, N);
    if (p.lc3.defined()) coefficient = reshape(coefficient, {H, M, N, 1}) * gather_by_pair(p.lc3, by_index, M, N);
  } else if (scheme == PositionalScheme::alibi_mult || scheme == PositionalScheme::alibi) {
    std::vector<double> values;
    for (int64_t h = 0; h < H; ++h) {
      for (double D : distance_values) {
        const double slope = std::pow(2.0, -8.0 * static_cast<double>(h + 1) / static_cast<double>(H));
        values.push_back(scheme == PositionalScheme::alibi ? -slope * D : std::exp(-slope * D));
      }
    }
    (scheme == PositionalScheme::alibi ? bias : coefficient) = constant(values, {H, M, N});
  } else if (scheme == PositionalScheme::t5) {
    bias = permute(embedding(p.t5_table, Tensor::from_vector(t5_bucket, {M, N})), {2, 0, 1});
  } else if (scheme == PositionalScheme::kerple_log) {
    bias = neg(reshape(p.r1, {H, 1, 1}) * log(add_scalar(reshape(p.r2, {H, 1, 1}) * D_mn, 1.0)));
  } else if (scheme == PositionalScheme::kerple_power) {
    std::vector<double> safe, positive;
    for (double D : distance_values) {
      safe.push_back(D > 0 ? D : 1.0);
      positive.push_back(D > 0 ? 1.0 : 0.0);
    }
    const Variable power = exp(reshape(p.r2, {H, 1, 1}) * log(constant(safe, {M, N}))) * constant(positive, {M, N});
    bias = neg(reshape(p.r1, {H, 1, 1}) * power);
  }

  // Scores.
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  Variable s;
  if (scheme == PositionalScheme::agf_f) {
    const Variable triple = reshape(q, {B, H, M, 1, dk}) * reshape(k, {B, H, 1, N, dk}) * coefficient;
    s = sum(triple, {-1}) * scale;
  } else {
    s = matmul(q, transpose(k, -1, -2)) * scale;
    if (coefficient.defined()) s = s * coefficient;
    if (bias.defined()) s = s + bias;
  }
  // Masks: -1e30 on padding and (causal) future keys; rows with no visible key are zeroed after softmax.
  std::vector<double> mask(static_cast<std::size_t>(B * M * N)), row_visible(static_cast<std::size_t>(B * M));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t length = c.key_lengths.empty() ? N : c.key_lengths[b];
    for (int64_t m = 0; m < M; ++m) {
      bool any = false;
      for (int64_t n = 0; n < N; ++n) {
        const bool visible = n < length && !(o.causal && n > m);
        mask[(b * M + m) * N + n] = visible ? 0.0 : -1e30;
        any = any || visible;
      }
      row_visible[b * M + m] = any ? 1.0 : 0.0;
    }
  }
  Variable a = softmax(s + constant(mask, {B, 1, M, N})) * constant(row_visible, {B, 1, M, 1});
  a = dropout(contiguous(a), o.dropout, o.dropout_seed, o.dropout_offset);

  // Output.
  if (!o.pcmv) return matmul(a, v);
  if (scheme != PositionalScheme::agf_f) return matmul(a * coefficient, v);
  return sum(reshape(a, {B, H, M, N, 1}) * coefficient * reshape(v, {B, H, 1, N, dk}), {3});
}

}  // namespace agf::testing
