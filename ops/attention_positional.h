#pragma once
// The positional table: the coefficient C or the score bias of every scheme, computed once per
// (direction δ, head h, distance D) — O(H·T) work, however long the batch — and gathered by the attention
// kernel. Its backward takes ∂L/∂table (summed by the kernel over every (b, m, n) with that (δ, h, D))
// and scatters it into the learnable parameters. In f64: the tables are small.
//
//   table[δ, h, D]      coefficient (agf-b, agf-m, alibi-mult) or bias (alibi, t5, kerple-*)
//   table[δ, h, D, j]   coefficient per feature j (agf-f)
//
// with D = 0 .. distances-1, distances = max(Tq, Tk) (the true distance; lc2/lc3 use i = min(D, L-1)).
#include <cstdint>

#include "ops/attention.h"

namespace agf::ops {

inline constexpr int64_t kT5Buckets = 32;           // SPEC §5: 32 buckets ...
inline constexpr int64_t kT5MaxDistance = 128;      // ... logarithmic up to distance 128
inline constexpr double kKerpleMinimum = 0.01;      // r1, r2 >= 0.01
inline constexpr double kKerplePowerMaximum = 2.0;  // r2 <= 2 (kerple-power)

// ALiBi's head slope: 2^(-8(h+1)/H).
double alibi_slope(int64_t head, int64_t heads);

// T5's relative_position_bucket for d = m - n (query minus key), as in the T5 reference code (including
// its float32 logarithm). Bidirectional (encoder): 16 buckets per direction, keys after the query in
// 16..31; unidirectional (causal decoder): all 32 for keys at or before the query.
int64_t t5_bucket(int64_t query_minus_key, bool bidirectional, int64_t buckets = kT5Buckets,
                  int64_t max_distance = kT5MaxDistance);

struct PositionalTableShape {
  int64_t heads = 1, head_dim = 1;
  int64_t distances = 1;  // D runs over 0 .. distances-1
};

// Checks that the parameters the scheme needs are present with the right shapes (and no others).
void check_positional_parameters(const PositionalParameters& positional, const AttentionOptions& options,
                                 const PositionalTableShape& shape);

// The f64 table [2, H, distances] ([2, H, distances, dk] for agf-f); undefined for none and rope.
//   agf:          LC1(δ,h,D) = G[δ,h] / (1 + D·max(rho[δ,h], 0))^k
//                 C = LC1 (agf-b),  LC1·lc2[δ,h,i] (agf-m),  LC1·lc2[δ,h,i]·lc3[δ,h,i,j] (agf-f)
//   alibi-mult:   C = exp(-slope_h·D)          alibi:  bias = -slope_h·D
//   t5:           bias = t5_table[bucket(d), h]
//   kerple-log:   bias = -r1·ln(1 + r2·D)      kerple-power:  bias = -r1·D^r2     (r clamped, SPEC §5)
Tensor positional_table_forward(const PositionalParameters& positional, const AttentionOptions& options,
                                const PositionalTableShape& shape);

// grad_table: ∂L/∂table (f64, the table's shape). Returns ∂L/∂parameter for each defined parameter, in
// its dtype. Clamped parameters (rho < 0, r1 or r2 outside their range) get zero gradient.
//   ∂LC1/∂G = LC1/G = base^-k,   ∂LC1/∂rho = -k·D·LC1/base,   ∂LC1/∂k = -ln(base)·LC1   (base = 1 + D·max(rho, 0))
//   ∂T/∂lc2[i] = LC1·lc3 (summed over every D with min(D, L-1) = i),   ∂T/∂lc3[i,j] = LC1·lc2[i]
PositionalParameters positional_table_backward(const Tensor& grad_table, const PositionalParameters& positional,
                                               const AttentionOptions& options, const PositionalTableShape& shape);

}  // namespace agf::ops
