// The positional table of every scheme (forward) and the scatter of its gradient into the parameters
// (backward). See ops/attention_positional.h for the formulas and docs/agf-backprop.md §5–6 for the
// derivation of each gradient line below.
#include "ops/attention_positional.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/gravitational_coefficient.h"

namespace agf::ops {

// ---- the scheme catalogue ------------------------------------------------------------------------------

std::string_view scheme_name(PositionalScheme scheme) {
  switch (scheme) {
    case PositionalScheme::none: return "none";
    case PositionalScheme::rope: return "rope";
    case PositionalScheme::alibi: return "alibi";
    case PositionalScheme::alibi_mult: return "alibi-mult";
    case PositionalScheme::t5: return "t5";
    case PositionalScheme::kerple_log: return "kerple-log";
    case PositionalScheme::kerple_power: return "kerple-power";
    case PositionalScheme::agf_b: return "agf-b";
    case PositionalScheme::agf_m: return "agf-m";
    case PositionalScheme::agf_f: return "agf-f";
  }
  return "?";
}

PositionalScheme parse_positional_scheme(std::string_view name) {
  std::string known;
  for (PositionalScheme scheme : kPositionalSchemes) {
    if (scheme_name(scheme) == name) return scheme;
    known += (known.empty() ? "" : ", ") + std::string(scheme_name(scheme));
  }
  fail("unknown positional scheme '{}' (known: {})", name, known);
}

TableUse table_use(PositionalScheme scheme) {
  switch (scheme) {
    case PositionalScheme::none:
    case PositionalScheme::rope: return TableUse::none;
    case PositionalScheme::alibi:
    case PositionalScheme::t5:
    case PositionalScheme::kerple_log:
    case PositionalScheme::kerple_power: return TableUse::bias;
    case PositionalScheme::alibi_mult:
    case PositionalScheme::agf_b:
    case PositionalScheme::agf_m: return TableUse::coefficient;
    case PositionalScheme::agf_f: return TableUse::feature_coefficient;
  }
  fail("table_use: unknown positional scheme {}", static_cast<int>(scheme));
}

bool has_coefficient(PositionalScheme scheme) {
  const TableUse use = table_use(scheme);
  return use == TableUse::coefficient || use == TableUse::feature_coefficient;
}

bool has_score_bias(PositionalScheme scheme) { return table_use(scheme) == TableUse::bias; }

bool is_per_feature(PositionalScheme scheme) { return table_use(scheme) == TableUse::feature_coefficient; }

bool is_gravitational(PositionalScheme scheme) {
  return scheme == PositionalScheme::agf_b || scheme == PositionalScheme::agf_m || scheme == PositionalScheme::agf_f;
}

namespace {
bool uses_lc2(PositionalScheme scheme) {
  return scheme == PositionalScheme::agf_m || scheme == PositionalScheme::agf_f;
}
bool uses_lc3(PositionalScheme scheme) { return scheme == PositionalScheme::agf_f; }
bool is_t5(PositionalScheme scheme) { return scheme == PositionalScheme::t5; }
bool is_kerple(PositionalScheme scheme) {
  return scheme == PositionalScheme::kerple_log || scheme == PositionalScheme::kerple_power;
}
}  // namespace

// ---- the positional parameters (ops/attention.h) ------------------------------------------------------------

using Spec = PositionalParameterSpec;
using P = PositionalParameter;
// Constant-initialized (no static-initialization order to mind): literals and captureless lambdas only.
constinit const std::array<PositionalParameterSpec, 8> kPositionalParameterTable = {{
    {P::G, "G",
     [](int64_t H, int64_t, int64_t) {
       return Shape{2, H};
     },
     is_gravitational, false},
    {P::rho, "rho",
     [](int64_t H, int64_t, int64_t) {
       return Shape{2, H};
     },
     is_gravitational, false},
    {P::k, "k", [](int64_t, int64_t, int64_t) { return Shape{1}; }, is_gravitational, true},
    {P::lc2, "lc2",
     [](int64_t H, int64_t L, int64_t) {
       return Shape{2, H, L};
     },
     uses_lc2, false},
    {P::lc3, "lc3",
     [](int64_t H, int64_t L, int64_t dk) {
       return Shape{2, H, L, dk};
     },
     uses_lc3, false},
    {P::t5_table, "t5_table",
     [](int64_t H, int64_t, int64_t) {
       return Shape{kT5Buckets, H};
     },
     is_t5, false},
    {P::r1, "r1", [](int64_t H, int64_t, int64_t) { return Shape{H}; }, is_kerple, false},
    {P::r2, "r2", [](int64_t H, int64_t, int64_t) { return Shape{H}; }, is_kerple, false},
}};

const PositionalParameterSpec& positional_parameter(PositionalParameter id) {
  return kPositionalParameterTable[static_cast<std::size_t>(id)];
}

const PositionalParameterSpec& positional_parameter(std::string_view name) {
  std::string known;
  for (const Spec& spec : kPositionalParameterTable) {
    if (spec.name == name) return spec;
    known += (known.empty() ? "" : ", ") + std::string(spec.name);
  }
  fail("unknown positional parameter '{}' (known: {})", name, known);
}

// ---- fixed functions of the baselines ---------------------------------------------------------------------

double alibi_slope(int64_t head, int64_t heads) {
  return std::exp2(-8.0 * static_cast<double>(head + 1) / static_cast<double>(heads));
}

int64_t t5_bucket(int64_t query_minus_key, bool bidirectional, int64_t buckets, int64_t max_distance) {
  // T5's relative_position = key - query = -d.
  const int64_t relative_position = -query_minus_key;
  int64_t bucket = 0, distance = 0;
  if (bidirectional) {
    buckets /= 2;
    if (relative_position > 0) bucket += buckets;  // the key comes after the query
    distance = std::abs(relative_position);
  } else {
    distance = std::max<int64_t>(-relative_position, 0);
  }
  const int64_t max_exact = buckets / 2;
  if (distance < max_exact) return bucket + distance;
  // The reference computes the logarithmic bucket in float32 and truncates; we do the same, so the
  // bucket boundaries (and therefore checkpoints) agree with it.
  const float ratio = static_cast<float>(distance) / static_cast<float>(max_exact);
  const float log_span = static_cast<float>(
      std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float scaled = std::log(ratio) / log_span * static_cast<float>(buckets - max_exact);
  const int64_t large = std::min<int64_t>(max_exact + static_cast<int64_t>(scaled), buckets - 1);
  return bucket + large;
}

// ---- parameter checks ---------------------------------------------------------------------------------------

void check_positional_parameters(const PositionalParameters& p, const AttentionOptions& options,
                                 const PositionalTableShape& shape) {
  const PositionalScheme scheme = options.scheme;
  const std::string_view name = scheme_name(scheme);
  const int64_t heads = shape.heads, L = options.max_distance;
  AGF_CHECK(L >= 1, "attention ({}): max distance L must be >= 1, got {}", name, L);
  AGF_CHECK(!options.pcmv || has_coefficient(scheme),
            "attention: PCM-V applies to the coefficient schemes (agf-b, agf-m, agf-f, alibi-mult), not to '{}'", name);
  auto expect = [&](const Tensor& t, bool wanted, std::string_view what, const Shape& expected) {
    if (!wanted) {
      AGF_CHECK(!t.defined(), "attention ({}): parameter '{}' was given but the scheme has none", name, what);
      return;
    }
    AGF_CHECK(t.defined(), "attention ({}): parameter '{}' {} is missing", name, what, shape_string(expected));
    AGF_CHECK(is_floating(t.dtype()), "attention ({}): parameter '{}' must be floating point, got {}", name, what,
              t.description());
    AGF_CHECK(t.shape() == expected, "attention ({}): parameter '{}' must be {}, got {}", name, what,
              shape_string(expected), t.description());
  };
  for (const Spec& spec : kPositionalParameterTable) {
    const Tensor& value = p[spec.id];
    if (spec.optional && !value.defined()) continue;  // k: AttentionOptions::k
    expect(value, spec.owned_by(scheme), spec.name, spec.shape(heads, L, shape.head_dim));
  }
}

namespace {

std::vector<double> values_of(const Tensor& t) { return t.defined() ? t.to_double_vector() : std::vector<double>{}; }

// The gradient of `parameter` as a tensor of its own shape, dtype and device.
Tensor gradient_like(const std::vector<double>& gradient, const Tensor& parameter) {
  return Tensor::from_vector(gradient, parameter.shape(), parameter.dtype()).to(parameter.device());
}

double exponent_of(const PositionalParameters& p, const AttentionOptions& options) {
  return p.k.defined() ? p.k.item() : options.k;
}

double clamp_kerple_r1(double r1) { return std::max(r1, kKerpleMinimum); }
double clamp_kerple_r2(PositionalScheme scheme, double r2) {
  const double lower = std::max(r2, kKerpleMinimum);
  return scheme == PositionalScheme::kerple_power ? std::min(lower, kKerplePowerMaximum) : lower;
}
bool r2_is_clamped(PositionalScheme scheme, double r2) {
  return r2 < kKerpleMinimum || (scheme == PositionalScheme::kerple_power && r2 > kKerplePowerMaximum);
}

}  // namespace

// ---- forward ------------------------------------------------------------------------------------------------

Tensor positional_table_forward(const PositionalParameters& p, const AttentionOptions& options,
                                const PositionalTableShape& shape) {
  check_positional_parameters(p, options, shape);
  const PositionalScheme scheme = options.scheme;
  if (!has_coefficient(scheme) && !has_score_bias(scheme)) return Tensor();
  const int64_t H = shape.heads, distances = shape.distances, L = options.max_distance;
  const int64_t width = is_per_feature(scheme) ? shape.head_dim : 1;
  std::vector<double> table(static_cast<std::size_t>(2 * H * distances * width));
  auto entry = [&](int64_t direction, int64_t head, int64_t distance) {
    return table.data() + ((direction * H + head) * distances + distance) * width;
  };

  if (is_gravitational(scheme)) {
    const std::vector<double> G = values_of(p.G), rho = values_of(p.rho), lc2 = values_of(p.lc2),
                              lc3 = values_of(p.lc3);
    const double k = exponent_of(p, options);
    for (int64_t direction = 0; direction < 2; ++direction) {
      for (int64_t head = 0; head < H; ++head) {
        const int64_t dh = direction * H + head;
        for (int64_t distance = 0; distance < distances; ++distance) {
          const int64_t i = std::min(distance, L - 1);  // the table index; LC1 keeps the true distance
          const double lc1 = lc1_at(G[dh], rho[dh], k, distance).value;
          const double level2 = uses_lc2(scheme) ? lc2[dh * L + i] : 1.0;
          double* out = entry(direction, head, distance);
          if (scheme == PositionalScheme::agf_f) {
            // C(j) = LC1 · lc2[i] · lc3[i, j]
            for (int64_t j = 0; j < width; ++j) out[j] = lc1 * level2 * lc3[(dh * L + i) * width + j];
          } else {
            out[0] = lc1 * level2;  // C = LC1 (agf-b) or LC1 · lc2[i] (agf-m)
          }
        }
      }
    }
    return Tensor::from_vector(table, is_per_feature(scheme) ? Shape{2, H, distances, width} : Shape{2, H, distances},
                               DType::f64);
  }

  const std::vector<double> t5 = values_of(p.t5_table), r1 = values_of(p.r1), r2 = values_of(p.r2);
  for (int64_t direction = 0; direction < 2; ++direction) {
    for (int64_t head = 0; head < H; ++head) {
      for (int64_t distance = 0; distance < distances; ++distance) {
        const double D = static_cast<double>(distance);
        double& out = *entry(direction, head, distance);
        switch (scheme) {
          case PositionalScheme::alibi_mult: out = std::exp(-alibi_slope(head, H) * D); break;
          case PositionalScheme::alibi: out = -alibi_slope(head, H) * D; break;
          case PositionalScheme::t5: {
            const int64_t d = direction == 0 ? distance : -distance;
            out = t5[t5_bucket(d, !options.causal) * H + head];
            break;
          }
          case PositionalScheme::kerple_log:
            out = -clamp_kerple_r1(r1[head]) * std::log1p(clamp_kerple_r2(scheme, r2[head]) * D);
            break;
          case PositionalScheme::kerple_power:
            out = distance == 0 ? 0.0 : -clamp_kerple_r1(r1[head]) * std::pow(D, clamp_kerple_r2(scheme, r2[head]));
            break;
          default: fail("positional_table_forward: scheme '{}' has no table", scheme_name(scheme));
        }
      }
    }
  }
  return Tensor::from_vector(table, {2, H, distances}, DType::f64);
}

// ---- backward -----------------------------------------------------------------------------------------------

PositionalParameters positional_table_backward(const Tensor& grad_table, const PositionalParameters& p,
                                               const AttentionOptions& options, const PositionalTableShape& shape) {
  const PositionalScheme scheme = options.scheme;
  PositionalParameters grads;
  if (!has_coefficient(scheme) && !has_score_bias(scheme)) return grads;
  const int64_t H = shape.heads, distances = shape.distances, L = options.max_distance;
  const int64_t width = is_per_feature(scheme) ? shape.head_dim : 1;
  AGF_CHECK(grad_table.numel() == 2 * H * distances * width,
            "positional_table_backward: gradient {} does not match the table [2, {}, {}, {}]", grad_table.description(),
            H, distances, width);
  const std::vector<double> gT = grad_table.to_double_vector();
  auto grad_entry = [&](int64_t direction, int64_t head, int64_t distance) {
    return gT.data() + ((direction * H + head) * distances + distance) * width;
  };

  if (is_gravitational(scheme)) {
    const std::vector<double> G = values_of(p.G), rho = values_of(p.rho), lc2 = values_of(p.lc2),
                              lc3 = values_of(p.lc3);
    const double k = exponent_of(p, options);
    std::vector<double> gG(G.size()), grho(rho.size()), glc2(lc2.size()), glc3(lc3.size());
    double g_k_exponent = 0;  // ∂L/∂k of LC1 (gk is the keys' gradient)
    for (int64_t direction = 0; direction < 2; ++direction) {
      for (int64_t head = 0; head < H; ++head) {
        const int64_t dh = direction * H + head;
        for (int64_t distance = 0; distance < distances; ++distance) {
          const int64_t i = std::min(distance, L - 1);
          const Lc1 lc1 = lc1_at(G[dh], rho[dh], k, distance);
          const double* gT_entry = grad_entry(direction, head, distance);  // gT[δ,h,D,·]
          // ∂L/∂LC1: T is LC1 times the lower levels, so LC1's gradient is gT times those levels.
          double g_lc1 = 0;
          if (scheme == PositionalScheme::agf_f) {
            const int64_t row = (dh * L + i) * width;
            for (int64_t j = 0; j < width; ++j) {
              g_lc1 += gT_entry[j] * lc2[dh * L + i] * lc3[row + j];       // ∂T(j)/∂LC1  = lc2·lc3(j)
              glc2[dh * L + i] += gT_entry[j] * lc1.value * lc3[row + j];  // ∂T(j)/∂lc2  = LC1·lc3(j)
              glc3[row + j] += gT_entry[j] * lc1.value * lc2[dh * L + i];  // ∂T(j)/∂lc3(j) = LC1·lc2
            }
          } else if (scheme == PositionalScheme::agf_m) {
            g_lc1 = gT_entry[0] * lc2[dh * L + i];        // ∂T/∂LC1 = lc2
            glc2[dh * L + i] += gT_entry[0] * lc1.value;  // ∂T/∂lc2 = LC1
          } else {
            g_lc1 = gT_entry[0];  // T = LC1
          }
          gG[dh] += g_lc1 * lc1.power;  // ∂LC1/∂G = base^(-k), base = 1 + D·ρ⁺, ρ⁺ = max(rho, 0)
          // ∂LC1/∂rho = -k·D·LC1/base; 0 where rho < 0 (ρ⁺ is flat there)
          if (rho[dh] >= 0) grho[dh] += g_lc1 * (-k * static_cast<double>(distance) * lc1.value / lc1.base);
          g_k_exponent += g_lc1 * (-std::log(lc1.base) * lc1.value);  // ∂LC1/∂k = -ln(base)·LC1
        }
      }
    }
    grads.G = gradient_like(gG, p.G);
    grads.rho = gradient_like(grho, p.rho);
    if (p.k.defined()) grads.k = gradient_like({g_k_exponent}, p.k);
    if (p.lc2.defined()) grads.lc2 = gradient_like(glc2, p.lc2);
    if (p.lc3.defined()) grads.lc3 = gradient_like(glc3, p.lc3);
    return grads;
  }

  if (scheme == PositionalScheme::t5) {
    // bias(δ,h,D) = table[bucket, h]  =>  ∂L/∂table[bucket, h] = Σ over the (δ, D) in that bucket
    std::vector<double> gtable(static_cast<std::size_t>(kT5Buckets * H));
    for (int64_t direction = 0; direction < 2; ++direction) {
      for (int64_t head = 0; head < H; ++head) {
        for (int64_t distance = 0; distance < distances; ++distance) {
          const int64_t d = direction == 0 ? distance : -distance;
          gtable[t5_bucket(d, !options.causal) * H + head] += *grad_entry(direction, head, distance);
        }
      }
    }
    grads.t5_table = gradient_like(gtable, p.t5_table);
    return grads;
  }

  if (is_kerple(scheme)) {
    const std::vector<double> r1 = values_of(p.r1), r2 = values_of(p.r2);
    std::vector<double> gr1(r1.size()), gr2(r2.size());
    for (int64_t head = 0; head < H; ++head) {
      const double r1c = clamp_kerple_r1(r1[head]), r2c = clamp_kerple_r2(scheme, r2[head]);
      const bool r1_free = r1[head] >= kKerpleMinimum, r2_free = !r2_is_clamped(scheme, r2[head]);
      for (int64_t direction = 0; direction < 2; ++direction) {
        for (int64_t distance = 1; distance < distances; ++distance) {  // D = 0 has bias 0 and no gradient
          const double D = static_cast<double>(distance), g = *grad_entry(direction, head, distance);
          if (scheme == PositionalScheme::kerple_log) {
            // bias = -r1·ln(1 + r2·D):  ∂/∂r1 = -ln(1 + r2·D),  ∂/∂r2 = -r1·D/(1 + r2·D)
            if (r1_free) gr1[head] += g * -std::log1p(r2c * D);
            if (r2_free) gr2[head] += g * (-r1c * D / (1 + r2c * D));
          } else {
            // bias = -r1·D^r2:  ∂/∂r1 = -D^r2,  ∂/∂r2 = -r1·D^r2·ln D
            const double power = std::pow(D, r2c);
            if (r1_free) gr1[head] += g * -power;
            if (r2_free) gr2[head] += g * (-r1c * power * std::log(D));
          }
        }
      }
    }
    grads.r1 = gradient_like(gr1, p.r1);
    grads.r2 = gradient_like(gr2, p.r2);
  }
  return grads;  // alibi, alibi-mult: fixed, nothing to learn
}

}  // namespace agf::ops
