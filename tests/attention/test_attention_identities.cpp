// Identities between schemes, the initial coefficient, and the edge cases of the attention op.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/attention.h"
#include "autograd/functions.h"
#include "core/random.h"
#include "ops/attention.h"
#include "ops/attention_positional.h"
#include "ops/elementwise.h"
#include "ops/rope.h"

namespace {

using agf::DType;
using agf::Tensor;
using agf::Variable;
using agf::ops::AttentionOptions;
using agf::ops::PositionalParameters;
using agf::ops::PositionalScheme;

Tensor random(const agf::Shape& shape, uint64_t seed, double low = -1, double high = 1, DType dtype = DType::f64) {
  agf::Generator generator(seed);
  return agf::uniform(shape, generator, low, high, dtype);
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_double_vector(), y = b.to_double_vector();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

bool all_finite(const Tensor& t) {
  for (double x : t.to_double_vector()) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

struct Run {
  Tensor output;
  agf::ops::AttentionGradients grads;
};

// Forward and backward (with a fixed random ∂L/∂o) of the raw op.
Run run(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& lengths, const PositionalParameters& p,
        const AttentionOptions& options) {
  agf::ops::AttentionForward forward = agf::ops::attention_forward(q, k, v, lengths, p, options);
  const Tensor grad = random(forward.output.shape(), 5, -1, 1, q.dtype());
  return {forward.output, agf::ops::attention_backward(grad, q, k, v, lengths, p, options, forward.saved)};
}

struct Inputs {
  Tensor q, k, v, lengths;
};
Inputs inputs(int64_t B = 2, int64_t H = 2, int64_t T = 5, int64_t dk = 4, DType dtype = DType::f64) {
  return {random({B, H, T, dk}, 1, -1, 1, dtype), random({B, H, T, dk}, 2, -1, 1, dtype),
          random({B, H, T, dk}, 3, -1, 1, dtype), Tensor::from_vector(std::vector<int64_t>{T, T - 2}, {2})};
}

// The initial parameters of SPEC §3: G = 1, rho = 1/24, lc2 = lc3 = 1.
PositionalParameters initial(PositionalScheme scheme, int64_t H, int64_t L, int64_t dk) {
  PositionalParameters p;
  p.G = Tensor::ones({2, H}, DType::f64);
  p.rho = Tensor::full({2, H}, 1.0 / 24.0, DType::f64);
  if (scheme != PositionalScheme::agf_b) p.lc2 = Tensor::ones({2, H, L}, DType::f64);
  if (scheme == PositionalScheme::agf_f) p.lc3 = Tensor::ones({2, H, L, dk}, DType::f64);
  return p;
}

AttentionOptions with_scheme(PositionalScheme scheme, bool pcmv = false, bool causal = false) {
  AttentionOptions o;
  o.scheme = scheme;
  o.pcmv = pcmv;
  o.causal = causal;
  o.max_distance = 4;
  return o;
}

}  // namespace

TEST_CASE("agf-b with G = 1, rho = 0 equals no positional term", "[attention]") {
  const Inputs x = inputs();
  for (bool pcmv : {false, true}) {
    for (bool causal : {false, true}) {
      PositionalParameters p;
      p.G = Tensor::ones({2, 2}, DType::f64);
      p.rho = Tensor::zeros({2, 2}, DType::f64);
      const Run agf = run(x.q, x.k, x.v, x.lengths, p, with_scheme(PositionalScheme::agf_b, pcmv, causal));
      const Run none = run(x.q, x.k, x.v, x.lengths, {}, with_scheme(PositionalScheme::none, false, causal));
      CHECK(max_abs_difference(agf.output, none.output) < 1e-14);
      CHECK(max_abs_difference(agf.grads.q, none.grads.q) < 1e-14);
      CHECK(max_abs_difference(agf.grads.k, none.grads.k) < 1e-14);
      CHECK(max_abs_difference(agf.grads.v, none.grads.v) < 1e-14);
      // With C ≡ 1 the gradient of G is Σ ∂L/∂C, which is not 0 in general: the check is not vacuous.
      CHECK(max_abs_difference(agf.grads.positional.G, Tensor::zeros({2, 2}, DType::f64)) > 1e-6);
    }
  }
}

TEST_CASE("agf-m with lc2 = 1 equals agf-b, and agf-f with lc3 = 1 equals agf-m", "[attention]") {
  const Inputs x = inputs();
  PositionalParameters b;
  b.G = random({2, 2}, 10, 0.5, 1.5);
  b.rho = random({2, 2}, 11, 0.05, 0.5);
  PositionalParameters m = b;
  m.lc2 = Tensor::ones({2, 2, 4}, DType::f64);
  PositionalParameters f = b;
  f.lc2 = random({2, 2, 4}, 12, 0.5, 1.5);
  f.lc3 = Tensor::ones({2, 2, 4, 4}, DType::f64);
  PositionalParameters m2 = f;
  m2.lc3 = Tensor();
  for (bool pcmv : {false, true}) {
    const Run rb = run(x.q, x.k, x.v, x.lengths, b, with_scheme(PositionalScheme::agf_b, pcmv));
    const Run rm = run(x.q, x.k, x.v, x.lengths, m, with_scheme(PositionalScheme::agf_m, pcmv));
    CHECK(max_abs_difference(rb.output, rm.output) < 1e-14);
    CHECK(max_abs_difference(rb.grads.q, rm.grads.q) < 1e-14);
    CHECK(max_abs_difference(rb.grads.v, rm.grads.v) < 1e-14);
    CHECK(max_abs_difference(rb.grads.positional.G, rm.grads.positional.G) < 1e-12);
    CHECK(max_abs_difference(rb.grads.positional.rho, rm.grads.positional.rho) < 1e-12);
    const Run rf = run(x.q, x.k, x.v, x.lengths, f, with_scheme(PositionalScheme::agf_f, pcmv));
    const Run rm2 = run(x.q, x.k, x.v, x.lengths, m2, with_scheme(PositionalScheme::agf_m, pcmv));
    CHECK(max_abs_difference(rf.output, rm2.output) < 1e-13);
    CHECK(max_abs_difference(rf.grads.k, rm2.grads.k) < 1e-13);
    CHECK(max_abs_difference(rf.grads.positional.lc2, rm2.grads.positional.lc2) < 1e-12);
  }
}

TEST_CASE("at initialisation the coefficient is 1/(1 + D/24)^2 for every level, direction and head", "[attention]") {
  const int64_t H = 3, L = 8, dk = 4, distances = 20;  // distances beyond L: LC1 keeps the true D
  for (PositionalScheme scheme : {PositionalScheme::agf_b, PositionalScheme::agf_m, PositionalScheme::agf_f}) {
    AttentionOptions options = with_scheme(scheme);
    options.max_distance = L;
    const Tensor table = agf::ops::positional_table_forward(initial(scheme, H, L, dk), options, {H, dk, distances});
    const std::vector<double> values = table.to_double_vector();
    const int64_t width = scheme == PositionalScheme::agf_f ? dk : 1;
    REQUIRE(static_cast<int64_t>(values.size()) == 2 * H * distances * width);
    for (std::size_t e = 0; e < values.size(); ++e) {
      const double D = static_cast<double>((static_cast<int64_t>(e) / width) % distances);
      const double expected = 1.0 / ((1.0 + D / 24.0) * (1.0 + D / 24.0));
      INFO(agf::ops::scheme_name(scheme) << " entry " << e << " D = " << D);
      CHECK(values[e] == Approx(expected).epsilon(1e-15));
    }
  }
}

TEST_CASE("the attention output at initialisation matches a direct loop with C = 1/(1+D/24)^2", "[attention]") {
  const Inputs x = inputs(1, 1, 6, 2);
  const Run r = run(x.q, x.k, x.v, Tensor(), initial(PositionalScheme::agf_m, 1, 4, 2),
                    with_scheme(PositionalScheme::agf_m, true));
  const std::vector<double> q = x.q.to_double_vector(), k = x.k.to_double_vector(), v = x.v.to_double_vector();
  const std::vector<double> o = r.output.to_double_vector();
  for (int m = 0; m < 6; ++m) {
    std::vector<double> s(6), c(6);
    double top = -1e300, total = 0;
    for (int n = 0; n < 6; ++n) {
      c[n] = 1.0 / std::pow(1.0 + std::abs(m - n) / 24.0, 2);
      s[n] = (q[m * 2] * k[n * 2] + q[m * 2 + 1] * k[n * 2 + 1]) / std::sqrt(2.0) * c[n];
      top = std::max(top, s[n]);
    }
    for (int n = 0; n < 6; ++n) total += std::exp(s[n] - top);
    for (int j = 0; j < 2; ++j) {
      double expected = 0;
      for (int n = 0; n < 6; ++n) expected += std::exp(s[n] - top) / total * c[n] * v[n * 2 + j];
      CHECK(o[m * 2 + j] == Approx(expected).epsilon(1e-12));
    }
  }
}

TEST_CASE("T = 1: a single key gets the whole weight", "[attention][edge]") {
  const Inputs x = inputs(2, 2, 1, 4);
  const Run none = run(x.q, x.k, x.v, Tensor(), {}, with_scheme(PositionalScheme::none));
  CHECK(max_abs_difference(none.output, x.v) < 1e-15);  // o = 1 · v
  // The score gradient is 0 (softmax of one element is constant), so q and k get none.
  CHECK(max_abs_difference(none.grads.q, Tensor::zeros(x.q.shape(), DType::f64)) == 0.0);
  PositionalParameters p = initial(PositionalScheme::agf_m, 2, 4, 4);
  p.G = Tensor::full({2, 2}, 0.5, DType::f64);
  const Run agf = run(x.q, x.k, x.v, Tensor(), p, with_scheme(PositionalScheme::agf_m, true));
  CHECK(max_abs_difference(agf.output, agf::ops::mul_scalar(x.v, 0.5)) < 1e-15);  // o = C(D=0)·v = G·v
}

TEST_CASE("T > L: lc2 is indexed by min(D, L-1) while LC1 keeps the true distance", "[attention][edge]") {
  const int64_t H = 1, L = 3, distances = 7;
  PositionalParameters p;
  p.G = Tensor::from_vector(std::vector<double>{1.5, 0.7}, {2, H}, DType::f64);
  p.rho = Tensor::from_vector(std::vector<double>{0.2, 0.3}, {2, H}, DType::f64);
  p.lc2 = Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, H, L}, DType::f64);
  const AttentionOptions options = with_scheme(PositionalScheme::agf_m);
  AttentionOptions clamped = options;
  clamped.max_distance = L;
  const std::vector<double> table =
      agf::ops::positional_table_forward(p, clamped, {H, 1, distances}).to_double_vector();
  for (int64_t direction = 0; direction < 2; ++direction) {
    for (int64_t D = 0; D < distances; ++D) {
      const double G = direction ? 0.7 : 1.5, rho = direction ? 0.3 : 0.2;
      const double lc2 = static_cast<double>(direction * L + std::min<int64_t>(D, L - 1) + 1);
      CHECK(table[direction * distances + D] == Approx(G / std::pow(1 + D * rho, 2.0) * lc2).epsilon(1e-14));
    }
  }
  // The gradient of lc2[i = L-1] collects every distance D >= L-1.
  std::vector<double> ones(static_cast<std::size_t>(2 * distances), 1.0);
  const PositionalParameters grads = agf::ops::positional_table_backward(
      Tensor::from_vector(ones, {2, H, distances}, DType::f64), p, clamped, {H, 1, distances});
  double expected_last = 0;
  for (int64_t D = L - 1; D < distances; ++D) expected_last += 1.5 / std::pow(1 + D * 0.2, 2.0);
  CHECK(grads.lc2.to_double_vector()[L - 1] == Approx(expected_last).epsilon(1e-14));
}

TEST_CASE("a fully masked row gives zeros and no NaN, forward and backward", "[attention][edge]") {
  for (PositionalScheme scheme : {PositionalScheme::none, PositionalScheme::agf_f, PositionalScheme::t5}) {
    const Inputs x = inputs();
    const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{3, 0}, {2});
    PositionalParameters p;
    if (scheme == PositionalScheme::agf_f) p = initial(scheme, 2, 4, 4);
    if (scheme == PositionalScheme::t5) p.t5_table = random({32, 2}, 4);
    const Run r = run(x.q, x.k, x.v, lengths, p, with_scheme(scheme, scheme == PositionalScheme::agf_f));
    INFO(agf::ops::scheme_name(scheme));
    CHECK(all_finite(r.output));
    CHECK(all_finite(r.grads.q));
    CHECK(all_finite(r.grads.k));
    CHECK(all_finite(r.grads.v));
    const Tensor second = r.output.select(0, 1);
    CHECK(max_abs_difference(second, Tensor::zeros(second.shape(), DType::f64)) == 0.0);
    CHECK(max_abs_difference(r.grads.q.select(0, 1), Tensor::zeros(second.shape(), DType::f64)) == 0.0);
    CHECK(max_abs_difference(r.grads.v.select(0, 1), Tensor::zeros(second.shape(), DType::f64)) == 0.0);
    // The first sequence is unaffected: keys 3 and 4 are padding, so v there gets no gradient.
    CHECK(max_abs_difference(r.grads.v.select(0, 0).slice(1, 3, 5), Tensor::zeros({2, 2, 4}, DType::f64)) == 0.0);
    CHECK(max_abs_difference(r.grads.v.select(0, 0).slice(1, 0, 3), Tensor::zeros({2, 3, 4}, DType::f64)) > 0.0);
  }
}

TEST_CASE("rho < 0 is clamped: LC1 = G and rho gets no gradient", "[attention][edge]") {
  const Inputs x = inputs();
  PositionalParameters p;
  p.G = random({2, 2}, 20, 0.5, 1.5);
  p.rho = Tensor::from_vector(std::vector<double>{-0.3, -0.1, 0.2, 0.4}, {2, 2}, DType::f64);
  const Run r = run(x.q, x.k, x.v, Tensor(), p, with_scheme(PositionalScheme::agf_b, true));
  const std::vector<double> grho = r.grads.positional.rho.to_double_vector();
  CHECK(grho[0] == 0.0);
  CHECK(grho[1] == 0.0);
  CHECK(grho[2] != 0.0);
  CHECK(grho[3] != 0.0);
  const std::vector<double> table =
      agf::ops::positional_table_forward(p, with_scheme(PositionalScheme::agf_b), {2, 4, 5}).to_double_vector();
  const std::vector<double> G = p.G.to_double_vector();
  for (int D = 0; D < 5; ++D) CHECK(table[D] == G[0]);  // δ = 0, head 0: no decay at all
}

TEST_CASE("large k stays finite (the coefficient underflows towards 0, never to NaN)", "[attention][edge]") {
  const Inputs x = inputs(2, 2, 12, 4);
  PositionalParameters p = initial(PositionalScheme::agf_m, 2, 4, 4);
  p.rho = Tensor::full({2, 2}, 5.0, DType::f64);
  p.k = Tensor::from_vector(std::vector<double>{400.0}, {1}, DType::f64);
  const Run r = run(x.q, x.k, x.v, x.lengths, p, with_scheme(PositionalScheme::agf_m, true));
  CHECK(all_finite(r.output));
  CHECK(all_finite(r.grads.q));
  CHECK(all_finite(r.grads.positional.G));
  CHECK(all_finite(r.grads.positional.rho));
  CHECK(all_finite(r.grads.positional.k));
  const std::vector<double> table =
      agf::ops::positional_table_forward(p, with_scheme(PositionalScheme::agf_m), {2, 4, 12}).to_double_vector();
  CHECK(table[0] == 1.0);
  CHECK(table[11] == Approx(std::pow(56.0, -400.0)).margin(1e-300));  // (1 + 11·5)^-400 underflows to 0
}

TEST_CASE("f32 and f64 agree, for every scheme, on a multi-threaded size", "[attention]") {
  for (PositionalScheme scheme : agf::ops::kPositionalSchemes) {
    for (bool pcmv : {false, true}) {
      if (pcmv && !agf::ops::has_coefficient(scheme)) continue;
      DYNAMIC_SECTION(agf::ops::scheme_name(scheme) << (pcmv ? "+pcmv" : "")) {
        const Inputs x = inputs(2, 4, 24, 16);
        PositionalParameters p;
        if (agf::ops::has_coefficient(scheme) && scheme != PositionalScheme::alibi_mult) {
          p = initial(scheme, 4, 16, 16);
          p.lc2 = scheme == PositionalScheme::agf_b ? Tensor() : random({2, 4, 16}, 30, 0.5, 1.5);
        }
        if (scheme == PositionalScheme::t5) p.t5_table = random({32, 4}, 31);
        if (scheme == PositionalScheme::kerple_log || scheme == PositionalScheme::kerple_power) {
          p.r1 = random({4}, 32, 0.5, 1.5);
          p.r2 = random({4}, 33, 0.5, 1.5);
        }
        AttentionOptions options = with_scheme(scheme, pcmv, false);
        options.max_distance = 16;
        const Run r64 = run(x.q, x.k, x.v, x.lengths, p, options);
        const Run r32 = run(x.q.to(DType::f32), x.k.to(DType::f32), x.v.to(DType::f32), x.lengths, p, options);
        CHECK(r32.output.dtype() == DType::f32);
        CHECK(max_abs_difference(r64.output, r32.output) < 1e-5);
        CHECK(max_abs_difference(r64.grads.q, r32.grads.q) < 1e-5);
        CHECK(max_abs_difference(r64.grads.k, r32.grads.k) < 1e-5);
        CHECK(max_abs_difference(r64.grads.v, r32.grads.v) < 1e-5);
      }
    }
  }
}

TEST_CASE("rope rotates pairs by t·10000^(-2i/dk), and its backward is the inverse rotation", "[attention]") {
  const Tensor x = random({1, 1, 3, 4}, 40);
  const Tensor y = agf::ops::rope_forward(x);
  const std::vector<double> a = x.to_double_vector(), b = y.to_double_vector();
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 2; ++i) {
      const double angle = t * std::pow(10000.0, -2.0 * i / 4.0);
      CHECK(b[t * 4 + 2 * i] == Approx(a[t * 4 + 2 * i] * std::cos(angle) - a[t * 4 + 2 * i + 1] * std::sin(angle)));
      CHECK(b[t * 4 + 2 * i + 1] ==
            Approx(a[t * 4 + 2 * i] * std::sin(angle) + a[t * 4 + 2 * i + 1] * std::cos(angle)));
    }
  }
  CHECK(max_abs_difference(agf::ops::rope_backward(y), x) < 1e-15);
  // Relative: after rope, q_m·k_n depends only on m - n.
  const Tensor q = agf::ops::rope_forward(Tensor::ones({1, 1, 6, 4}, DType::f64));
  const Tensor k = agf::ops::rope_forward(random({1, 1, 1, 4}, 41).expand({1, 1, 6, 4}).contiguous());
  const std::vector<double> qv = q.to_double_vector(), kv = k.to_double_vector();
  auto dot = [&](int m, int n) {
    double s = 0;
    for (int j = 0; j < 4; ++j) s += qv[m * 4 + j] * kv[n * 4 + j];
    return s;
  };
  CHECK(dot(3, 1) == Approx(dot(4, 2)));
  CHECK(dot(5, 5) == Approx(dot(0, 0)));
}

TEST_CASE("baseline tables: ALiBi slopes, T5 buckets, KERPLE clamps", "[attention]") {
  CHECK(agf::ops::alibi_slope(0, 8) == 0.5);
  CHECK(agf::ops::alibi_slope(7, 8) == std::pow(2.0, -8.0));
  // T5 (bidirectional): exact buckets below 8 per direction, keys after the query in 16..31, log above.
  CHECK(agf::ops::t5_bucket(0, true) == 0);
  CHECK(agf::ops::t5_bucket(5, true) == 5);
  CHECK(agf::ops::t5_bucket(-5, true) == 16 + 5);
  CHECK(agf::ops::t5_bucket(12, true) == 9);  // 8 + int(log(12/8)/log(16)·8) = 8 + 1
  CHECK(agf::ops::t5_bucket(1000, true) == 15);
  CHECK(agf::ops::t5_bucket(-1000, true) == 31);
  // Unidirectional (decoder): 16 exact buckets, then logarithmic up to 31.
  CHECK(agf::ops::t5_bucket(15, false) == 15);
  CHECK(agf::ops::t5_bucket(-3, false) == 0);
  CHECK(agf::ops::t5_bucket(127, false) == 31);
  CHECK(agf::ops::t5_bucket(20, false) == 17);  // 16 + int(log(20/16)/log(8)·16) = 16 + 1
  // KERPLE: r below 0.01 (and r2 above 2 for power) is clamped, with zero gradient.
  PositionalParameters p;
  p.r1 = Tensor::from_vector(std::vector<double>{0.001, 1.0}, {2}, DType::f64);
  p.r2 = Tensor::from_vector(std::vector<double>{1.0, 3.0}, {2}, DType::f64);
  AttentionOptions o = with_scheme(PositionalScheme::kerple_power);
  const std::vector<double> table = agf::ops::positional_table_forward(p, o, {2, 1, 3}).to_double_vector();
  CHECK(table[1] == Approx(-0.01 * 1.0));                    // head 0, D = 1: -max(r1, 0.01)·1^1
  CHECK(table[3 + 2] == Approx(-1.0 * std::pow(2.0, 2.0)));  // head 1, D = 2: r2 clamped to 2
  const PositionalParameters g = agf::ops::positional_table_backward(Tensor::ones({2, 2, 3}, DType::f64), p, o,
                                                                     {2, 1, 3});
  CHECK(g.r1.to_double_vector()[0] == 0.0);
  CHECK(g.r1.to_double_vector()[1] != 0.0);
  CHECK(g.r2.to_double_vector()[0] != 0.0);
  CHECK(g.r2.to_double_vector()[1] == 0.0);
}

TEST_CASE("attention rejects misuse with messages that say what is wrong", "[attention][errors]") {
  const Inputs x = inputs();
  CHECK_THROWS_WITH(agf::ops::attention_forward(x.q, x.k, x.v, Tensor(), {}, with_scheme(PositionalScheme::none, true)),
                    Catch::Contains("PCM-V applies to the coefficient schemes"));
  CHECK_THROWS_WITH(agf::ops::attention_forward(x.q, x.k, x.v, Tensor(), {}, with_scheme(PositionalScheme::agf_m)),
                    Catch::Contains("'G'") && Catch::Contains("missing"));
  CHECK_THROWS_WITH(agf::ops::attention_forward(x.q, x.k, x.v, Tensor::from_vector(std::vector<int64_t>{9, 1}, {2}), {},
                                                with_scheme(PositionalScheme::none)),
                    Catch::Contains("key length 9"));
  CHECK_THROWS_WITH(agf::ops::parse_positional_scheme("agf-x"), Catch::Contains("agf-m"));
  CHECK(agf::ops::parse_positional_scheme("kerple-log") == PositionalScheme::kerple_log);
}

TEST_CASE("agf-f in f32 agrees with f64 on sizes that fill the f32 vector blocks (64) with ragged ends",
          "[attention]") {
  for (bool causal : {false, true}) {
    const Inputs x = inputs(2, 2, 70, 72);  // 70 keys = 64 + 6, 72 features = 64 + 8
    PositionalParameters p = initial(PositionalScheme::agf_f, 2, 16, 72);
    p.lc3 = random({2, 2, 16, 72}, 50, 0.5, 1.5);
    AttentionOptions options = with_scheme(PositionalScheme::agf_f, true, causal);
    options.max_distance = 16;
    const Run r64 = run(x.q, x.k, x.v, x.lengths, p, options);
    const Run r32 = run(x.q.to(DType::f32), x.k.to(DType::f32), x.v.to(DType::f32), x.lengths, p, options);
    CHECK(max_abs_difference(r64.output, r32.output) < 1e-5);
    CHECK(max_abs_difference(r64.grads.q, r32.grads.q) < 1e-5);
    CHECK(max_abs_difference(r64.grads.k, r32.grads.k) < 1e-5);
    CHECK(max_abs_difference(r64.grads.v, r32.grads.v) < 1e-5);
    CHECK(max_abs_difference(r64.grads.positional.lc3, r32.grads.positional.lc3) < 1e-4);
    CHECK(max_abs_difference(r64.grads.positional.G, r32.grads.positional.G) < 1e-3);
  }
}
