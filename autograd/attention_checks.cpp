// Gradient checks of the attention op: every scheme × PCM-V (where it applies) × bidirectional/causal,
// each with and without key padding; cross-attention shapes (Tq ≠ Tk); dropout; edge cases. All run by
// `agf gradcheck --all` and by the test "every registered op passes gradcheck".
#include "autograd/attention_checks.h"
#include "autograd/builtin_op_checks.h"

#include <algorithm>
#include <utility>

#include "core/random.h"
#include "ops/attention_positional.h"

namespace agf {

using ops::PositionalScheme;

std::vector<std::string> positional_parameter_names(PositionalScheme scheme, bool learnable_k) {
  std::vector<std::string> names;
  for (const ops::PositionalParameterSpec& spec : ops::kPositionalParameterTable) {
    if (spec.owned_by(scheme) && (!spec.optional || learnable_k)) names.emplace_back(spec.name);
  }
  return names;
}

namespace {

Tensor draw(const Shape& shape, uint64_t seed, double low, double high) {
  Generator generator(seed);
  return uniform(shape, generator, low, high, DType::f64);
}

// The range each parameter's check values are drawn from: around its initial value and away from where the
// function is not smooth (rho > 0 and r1, r2 > 0; k near the configured exponent).
std::pair<double, double> check_range(ops::PositionalParameter id, const AttentionCheckCase& c) {
  switch (id) {
    case ops::PositionalParameter::rho: return {0.05, 0.5};
    case ops::PositionalParameter::k: return {c.options.k - 0.5, c.options.k + 0.5};
    case ops::PositionalParameter::t5_table: return {-1, 1};
    case ops::PositionalParameter::r1:
    case ops::PositionalParameter::r2: return {0.3, 1.5};
    default: return {0.5, 1.5};  // G, lc2, lc3
  }
}

}  // namespace

std::vector<Tensor> attention_check_inputs(const AttentionCheckCase& c) {
  const int64_t B = c.batch, H = c.heads, dk = c.head_dim, L = c.options.max_distance;
  const uint64_t seed = c.seed * 100;
  std::vector<Tensor> inputs{draw({B, H, c.queries, dk}, seed + 1, -1, 1), draw({B, H, c.keys, dk}, seed + 2, -1, 1),
                             draw({B, H, c.keys, dk}, seed + 3, -1, 1)};
  uint64_t next = seed + 10;
  for (const std::string& name : positional_parameter_names(c.options.scheme, c.learnable_k)) {
    const ops::PositionalParameterSpec& spec = ops::positional_parameter(name);
    const auto [low, high] = check_range(spec.id, c);
    Tensor value = draw(spec.shape(H, L, dk), next++, low, high);
    if (spec.id == ops::PositionalParameter::rho && c.negative_rho_before) {
      // δ = 0 clamped (rho < 0: LC1 = G there, no rho gradient), δ = 1 not
      for (int64_t h = 0; h < H; ++h) value.data<double>()[h] *= -1;
    }
    inputs.push_back(value);
  }
  return inputs;
}

Variable attention_check_function(const AttentionCheckCase& c, const std::vector<Variable>& inputs) {
  PositionalVariables positional;
  const std::vector<std::string> names = positional_parameter_names(c.options.scheme, c.learnable_k);
  for (std::size_t i = 0; i < names.size(); ++i) positional[ops::positional_parameter(names[i]).id] = inputs[3 + i];
  const Tensor lengths = c.key_lengths.empty()
                             ? Tensor()
                             : Tensor::from_vector(c.key_lengths, {c.batch}).to(inputs[0].data().device());
  return attention(inputs[0], inputs[1], inputs[2], lengths, positional, c.options);
}

std::string attention_check_name(PositionalScheme scheme, bool pcmv, bool causal) {
  return "attention:" + std::string(ops::scheme_name(scheme)) + (pcmv ? "+pcmv" : "") + (causal ? "+causal" : "");
}

GradcheckResult run_attention_gradcheck(const AttentionCheckCase& c) {
  return gradcheck([c](const std::vector<Variable>& x) { return attention_check_function(c, x); },
                   attention_check_inputs(c));
}

namespace {

// The worst of several checks, input by input.
GradcheckResult worst_of(const std::vector<GradcheckResult>& results) {
  GradcheckResult merged;
  for (const GradcheckResult& r : results) {
    merged.relative_error.resize(std::max(merged.relative_error.size(), r.relative_error.size()), 0.0);
    for (std::size_t i = 0; i < r.relative_error.size(); ++i) {
      merged.relative_error[i] = std::max(merged.relative_error[i], r.relative_error[i]);
    }
    merged.worst = std::max(merged.worst, r.worst);
    merged.passed = merged.passed && r.passed;
  }
  return merged;
}

AttentionCheckCase base_case(PositionalScheme scheme, bool pcmv, bool causal) {
  AttentionCheckCase c;
  c.options.scheme = scheme;
  c.options.pcmv = pcmv;
  c.options.causal = causal;
  c.options.max_distance = 3;  // T = 4 > L = 3: the largest distance uses the clamped index i = L-1
  c.seed = static_cast<uint64_t>(scheme) * 4 + (pcmv ? 2 : 0) + (causal ? 1 : 0) + 1;
  return c;
}

// One check per configuration, without and with key padding (lengths 4 and 2).
void add_configuration_checks(std::vector<OpCheck>& checks) {
  for (PositionalScheme scheme : ops::kPositionalSchemes) {
    for (bool pcmv : {false, true}) {
      if (pcmv && !ops::has_coefficient(scheme)) continue;
      for (bool causal : {false, true}) {
        const AttentionCheckCase c = base_case(scheme, pcmv, causal);
        checks.push_back(
            OpCheck{attention_check_name(scheme, pcmv, causal),
                    fmt::format("{}{} attention, {}, B=2 H=2 T=4 dk=4 L=3, unpadded and padded",
                                ops::scheme_name(scheme), pcmv ? " + PCM-V" : "", causal ? "causal" : "bidirectional"),
                    [c] {
                      AttentionCheckCase padded = c;
                      padded.key_lengths = {4, 2};
                      return worst_of({run_attention_gradcheck(c), run_attention_gradcheck(padded)});
                    }});
      }
    }
  }
}

// Cross-attention shapes: Tq = 3 queries, Tk = 5 keys, padded; bidirectional and causal.
void add_cross_shape_checks(std::vector<OpCheck>& checks) {
  for (PositionalScheme scheme : ops::kPositionalSchemes) {
    AttentionCheckCase c = base_case(scheme, ops::has_coefficient(scheme), false);
    c.queries = 3;
    c.keys = 5;
    c.key_lengths = {5, 3};
    c.seed += 1000;
    checks.push_back(OpCheck{"attention:" + std::string(ops::scheme_name(scheme)) + "+tq3tk5",
                             fmt::format("{} attention with Tq=3 != Tk=5 (padded), bidirectional and causal",
                                         ops::scheme_name(scheme)),
                             [c] {
                               AttentionCheckCase causal = c;
                               causal.options.causal = true;
                               return worst_of({run_attention_gradcheck(c), run_attention_gradcheck(causal)});
                             }});
  }
}

OpCheck edge_check(const std::string& name, const std::string& description, AttentionCheckCase c) {
  return OpCheck{name, description, [c] { return run_attention_gradcheck(c); }};
}

AttentionCheckCase with(AttentionCheckCase c, const std::function<void(AttentionCheckCase&)>& change) {
  change(c);
  return c;
}

// Dropout on the attention weights, and the edge cases.
std::vector<OpCheck> edge_checks() {
  return {
      edge_check("attention:none+dropout", "none, dropout p=0.3 on the weights (Philox mask regenerated)",
                 with(base_case(PositionalScheme::none, false, false),
                      [](AttentionCheckCase& c) {
                        c.options.dropout = 0.3, c.options.dropout_seed = 7, c.options.dropout_offset = 3;
                      })),
      edge_check("attention:agf-m+pcmv+dropout", "agf-m with PCM-V, padded, dropout p=0.3 on a (not on C)",
                 with(base_case(PositionalScheme::agf_m, true, false),
                      [](AttentionCheckCase& c) {
                        c.options.dropout = 0.3, c.options.dropout_seed = 8, c.key_lengths = {4, 3};
                      })),
      edge_check("attention:agf-f+pcmv+causal+dropout", "agf-f with PCM-V, causal, dropout p=0.3",
                 with(base_case(PositionalScheme::agf_f, true, true),
                      [](AttentionCheckCase& c) { c.options.dropout = 0.3, c.options.dropout_seed = 9; })),
      edge_check("attention:edge:masked-row", "agf-f + PCM-V with a sequence of key length 0 (its rows give 0)",
                 with(base_case(PositionalScheme::agf_f, true, false),
                      [](AttentionCheckCase& c) {
                        c.key_lengths = {3, 0};
                      })),
      edge_check("attention:edge:T=1", "agf-m + PCM-V, one token",
                 with(base_case(PositionalScheme::agf_m, true, true),
                      [](AttentionCheckCase& c) { c.queries = c.keys = 1; })),
      edge_check("attention:edge:T>>L", "agf-f + PCM-V, T=7 with L=2: most distances share index i=1, LC1 sees D",
                 with(base_case(PositionalScheme::agf_f, true, false),
                      [](AttentionCheckCase& c) { c.queries = c.keys = 7, c.options.max_distance = 2, c.batch = 1; })),
      edge_check("attention:edge:rho<0", "agf-m + PCM-V with rho < 0 for keys before the query (clamped to 0)",
                 with(base_case(PositionalScheme::agf_m, true, false),
                      [](AttentionCheckCase& c) { c.negative_rho_before = true; })),
      edge_check("attention:edge:large-k", "agf-m + PCM-V with k around 8 (learnable)",
                 with(base_case(PositionalScheme::agf_m, true, false),
                      [](AttentionCheckCase& c) { c.options.k = 8.0; })),
  };
}

}  // namespace

void add_attention_op_checks(std::vector<OpCheck>& checks) {
  add_configuration_checks(checks);
  add_cross_shape_checks(checks);
  for (OpCheck& check : edge_checks()) checks.push_back(std::move(check));
}

}  // namespace agf
