// The --explain walk-through of the attention backward (docs/agf-backprop.md §10). The step-by-step part is
// written with plain loops, formula by formula as in the doc — deliberately not with the op's code — and
// then compared with the op's backward and with central finite differences. The example has more tokens
// than table entries (T = 5 > L = 3), so distances 2, 3 and 4 share lc2/lc3's last entry i = min(D, L-1),
// and attention dropout on, so a' differs from a.
#include "tools/agf/attention_explain.h"

#include <fmt/core.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/philox.h"
#include "core/random.h"
#include "ops/attention_positional.h"
#include "ops/dropout_mask.h"

namespace agf::cli {

namespace {

using ops::PositionalScheme;
constexpr int kTokens = 5, kDim = 2, kL = 3;
constexpr double kDropout = 0.2;                           // p of the attention dropout
constexpr uint64_t kDropoutSeed = 11, kDropoutOffset = 0;  // its Philox stream

using Matrix = std::vector<std::vector<double>>;
Matrix matrix(int rows, int cols, double value = 0.0) { return Matrix(rows, std::vector<double>(cols, value)); }

void print(const std::string& name, const std::string& meaning, const Matrix& x) {
  fmt::print("{}  —  {}\n", name, meaning);
  for (const auto& row : x) {
    fmt::print("   ");
    for (double value : row) {
      if (std::isinf(value)) {
        fmt::print(" {:>10}", value < 0 ? "-inf" : "inf");
      } else {
        fmt::print(" {:>10.5f}", value);
      }
    }
    fmt::print("\n");
  }
}

Matrix to_matrix(const std::vector<double>& values, int rows, int cols) {
  Matrix x = matrix(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) x[r][c] = values[static_cast<std::size_t>(r * cols + c)];
  return x;
}

std::vector<double> draw(int count, uint64_t seed, double low, double high) {
  Generator generator(seed);
  return uniform({count}, generator, low, high, DType::f64).to_double_vector();
}

}  // namespace

int explain_attention(PositionalScheme scheme, bool pcmv, bool causal) {
  AGF_CHECK(scheme == PositionalScheme::agf_b || scheme == PositionalScheme::agf_m || scheme == PositionalScheme::agf_f,
            "--explain walks through the gravitational schemes: --pos agf-b, agf-m or agf-f (got '{}')",
            ops::scheme_name(scheme));
  const bool per_feature = scheme == PositionalScheme::agf_f;
  const int T = kTokens, dk = kDim, width = per_feature ? dk : 1;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));

  // ---- the example ----
  const std::vector<double> q_values = draw(T * dk, 1, -1, 1), k_values = draw(T * dk, 2, -1, 1),
                            v_values = draw(T * dk, 3, -1, 1), g_values = draw(T * dk, 4, -1, 1);
  std::vector<double> G = draw(2, 5, 0.8, 1.2), rho = draw(2, 6, 0.03, 0.08), k_exponent = {2.0};
  std::vector<double> lc2 = scheme == PositionalScheme::agf_b ? std::vector<double>{} : draw(2 * kL, 7, 0.8, 1.2);
  std::vector<double> lc3 = per_feature ? draw(2 * kL * dk, 8, 0.8, 1.2) : std::vector<double>{};
  const Matrix q = to_matrix(q_values, T, dk), k = to_matrix(k_values, T, dk), v = to_matrix(v_values, T, dk),
               g = to_matrix(g_values, T, dk);

  fmt::print("{}{} {} attention, one head, T = {} tokens, dk = {}, L = {}, learnable k, dropout p = {}; "
             "loss L = Σ o ⊙ g\n",
             ops::scheme_name(scheme), pcmv ? " with PCM-V" : "", causal ? "causal" : "bidirectional", T, dk, kL,
             kDropout);
  fmt::print("(names as in docs/agf-backprop.md; m = query row, n = key column; δ = [n > m], D = |m - n|;\n"
             " T > L, so the distances D >= L-1 = {} share the table index i = min(D, L-1) of lc2 and lc3)\n\n",
             kL - 1);
  fmt::print("== inputs ==\n");
  print("q", "queries [m, j]", q);
  print("k", "keys [n, j]", k);
  print("v", "values [n, j]", v);
  print("g", "∂L/∂o [m, j] (the weights of the loss)", g);
  fmt::print("G[δ] = {:.5f} {:.5f}   rho[δ] = {:.5f} {:.5f}   k = {:.1f}\n", G[0], G[1], rho[0], rho[1], k_exponent[0]);
  if (!lc2.empty()) print("lc2", "[δ, i]", to_matrix(lc2, 2, kL));
  if (!lc3.empty()) print("lc3", "[(δ, i), j]", to_matrix(lc3, 2 * kL, dk));

  // ---- forward, step by step ----
  auto direction = [](int m, int n) { return n > m ? 1 : 0; };
  auto distance = [](int m, int n) { return std::abs(m - n); };
  auto visible = [&](int m, int n) { return !(causal && n > m); };
  auto base = [&](int dir, int D) { return 1.0 + D * std::max(rho[dir], 0.0); };
  auto lc1 = [&](int dir, int D) { return G[dir] * std::pow(base(dir, D), -k_exponent[0]); };
  auto lc2_at = [&](int dir, int D) { return lc2.empty() ? 1.0 : lc2[dir * kL + std::min(D, kL - 1)]; };
  auto lc3_at = [&](int dir, int D, int j) {
    return lc3.empty() ? 1.0 : lc3[(dir * kL + std::min(D, kL - 1)) * dk + j];
  };
  // C[m][n][j] (the same for every j unless agf-f)
  std::vector<Matrix> C(dk, matrix(T, T));
  Matrix Dm = matrix(T, T), dm = matrix(T, T);
  for (int m = 0; m < T; ++m)
    for (int n = 0; n < T; ++n) {
      Dm[m][n] = distance(m, n), dm[m][n] = direction(m, n);
      for (int j = 0; j < dk; ++j)
        C[j][m][n] = lc1(direction(m, n), distance(m, n)) * lc2_at(direction(m, n), distance(m, n)) *
                     lc3_at(direction(m, n), distance(m, n), j);
    }
  // The dropout mask of pair (m, n): element m·T + n of the Philox stream (B = H = 1), as the op draws it.
  const float threshold = ops::dropout_threshold(kDropout);
  Matrix mask = matrix(T, T);
  for (int m = 0; m < T; ++m)
    for (int n = 0; n < T; ++n)
      mask[m][n] = ops::dropout_keeps(Philox4x32::bits(kDropoutSeed, kDropoutOffset, static_cast<uint64_t>(m * T + n)),
                                      threshold)
                       ? 1.0
                       : 0.0;
  Matrix P = matrix(T, T), s = matrix(T, T), a = matrix(T, T), a_dropped = matrix(T, T), W = matrix(T, T),
         o = matrix(T, dk);
  for (int m = 0; m < T; ++m) {
    for (int n = 0; n < T; ++n) {
      double dot = 0, weighted = 0;
      for (int j = 0; j < dk; ++j) dot += q[m][j] * k[n][j], weighted += q[m][j] * k[n][j] * C[j][m][n];
      P[m][n] = scale * dot;
      s[m][n] = visible(m, n) ? scale * weighted : -std::numeric_limits<double>::infinity();
    }
    double top = -1e300, total = 0;
    for (int n = 0; n < T; ++n) top = visible(m, n) ? std::max(top, s[m][n]) : top;
    for (int n = 0; n < T; ++n) total += visible(m, n) ? std::exp(s[m][n] - top) : 0.0;
    for (int n = 0; n < T; ++n) a[m][n] = visible(m, n) ? std::exp(s[m][n] - top) / total : 0.0;
    for (int n = 0; n < T; ++n) a_dropped[m][n] = a[m][n] * mask[m][n] / (1.0 - kDropout);  // a' = a ⊙ mask/(1-p)
    for (int n = 0; n < T; ++n) W[m][n] = pcmv && !per_feature ? a_dropped[m][n] * C[0][m][n] : a_dropped[m][n];
    for (int j = 0; j < dk; ++j)
      for (int n = 0; n < T; ++n) o[m][j] += a_dropped[m][n] * (pcmv ? C[j][m][n] : 1.0) * v[n][j];
  }
  fmt::print("\n== forward ==\n");
  print("D", "distance |m - n|", Dm);
  print("δ", "direction [n > m]", dm);
  const std::string c_meaning = scheme == PositionalScheme::agf_b   ? "C = LC1(δ,D) = G/(1 + D·max(rho, 0))^k"
                                : scheme == PositionalScheme::agf_m ? "C = LC1(δ,D) · lc2[δ, min(D, L-1)]"
                                                                    : "C = LC1 · lc2[δ,i] · lc3[δ,i,j]";
  for (int j = 0; j < width; ++j) print(per_feature ? fmt::format("C[:, :, j={}]", j) : "C", c_meaning, C[j]);
  print("P", "q·kᵀ/√dk", P);
  print("s", per_feature ? "(1/√dk)·Σ_j q·k·C  (-inf: masked)" : "P ⊙ C  (-inf: masked)", s);
  print("a", "softmax over n of s", a);
  print("mask", fmt::format("dropout keeps (1) or drops (0) the pair; Philox seed {}, element m·T + n", kDropoutSeed),
        mask);
  print("a'", fmt::format("a ⊙ mask / (1 - p), p = {}", kDropout), a_dropped);
  if (!per_feature) print("W", pcmv ? "a' ⊙ C (PCM-V: what multiplies v)" : "a' (what multiplies v)", W);
  print("o", pcmv ? "Σ_n a'·C·v" : "Σ_n a'·v", o);

  // ---- backward, step by step ----
  Matrix gW = matrix(T, T), ga = matrix(T, T), gs = matrix(T, T), gv = matrix(T, dk), gq = matrix(T, dk),
         gk = matrix(T, dk);
  std::vector<Matrix> gC_value(dk, matrix(T, T)), gC_score(dk, matrix(T, T));
  for (int m = 0; m < T; ++m)
    for (int n = 0; n < T; ++n)
      for (int j = 0; j < dk; ++j) {
        const double c = pcmv ? C[j][m][n] : 1.0;
        gW[m][n] += g[m][j] * v[n][j];                                      // gW = g·vᵀ
        ga[m][n] += g[m][j] * c * v[n][j];                                  // ∂L/∂a' = gW ⊙ C (PCM-V), = gW (off)
        gv[n][j] += a_dropped[m][n] * c * g[m][j];                          // gv = Wᵀ·g
        if (pcmv) gC_value[j][m][n] = a_dropped[m][n] * g[m][j] * v[n][j];  // gC_value = gW ⊙ a' (summed over j)
      }
  for (int m = 0; m < T; ++m) {  // through dropout and softmax: gs = a'⊙ga - a·Σ_r a'⊙ga (§4)
    double total = 0;
    for (int n = 0; n < T; ++n) total += a_dropped[m][n] * ga[m][n];
    for (int n = 0; n < T; ++n) gs[m][n] = a_dropped[m][n] * ga[m][n] - a[m][n] * total;
  }
  for (int m = 0; m < T; ++m)
    for (int n = 0; n < T; ++n)
      for (int j = 0; j < dk; ++j) {
        gC_score[j][m][n] = scale * gs[m][n] * q[m][j] * k[n][j];  // gs ⊙ P (summed over j)
        gq[m][j] += scale * gs[m][n] * C[j][m][n] * k[n][j];
        gk[n][j] += scale * gs[m][n] * C[j][m][n] * q[m][j];
      }
  // gC per pair (summed over j unless agf-f), then gT[δ][D][j]
  auto reduce_j = [&](const std::vector<Matrix>& x) {
    if (per_feature) return x;
    std::vector<Matrix> out(1, matrix(T, T));
    for (int j = 0; j < dk; ++j)
      for (int m = 0; m < T; ++m)
        for (int n = 0; n < T; ++n) out[0][m][n] += x[j][m][n];
    return out;
  };
  const std::vector<Matrix> gCs = reduce_j(gC_score), gCv = reduce_j(gC_value);
  std::vector<Matrix> gC = gCs;
  for (int j = 0; j < width; ++j)
    for (int m = 0; m < T; ++m)
      for (int n = 0; n < T; ++n) gC[j][m][n] += gCv[j][m][n];
  Matrix gT = matrix(2 * T, width);  // rows (δ, D)
  for (int m = 0; m < T; ++m)
    for (int n = 0; n < T; ++n)
      for (int j = 0; j < width; ++j) gT[direction(m, n) * T + distance(m, n)][j] += gC[j][m][n];
  Matrix gLC1 = matrix(2, T);
  std::vector<double> gG(2), grho(2), gk_exponent(1), glc2(lc2.size()), glc3(lc3.size());
  for (int dir = 0; dir < 2; ++dir)
    for (int D = 0; D < T; ++D) {
      const int i = std::min(D, kL - 1);
      for (int j = 0; j < width; ++j) {
        const double level3 = per_feature ? lc3_at(dir, D, j) : 1.0;
        gLC1[dir][D] += gT[dir * T + D][j] * lc2_at(dir, D) * level3;
        if (!lc2.empty()) glc2[dir * kL + i] += gT[dir * T + D][j] * lc1(dir, D) * level3;
        if (per_feature) glc3[(dir * kL + i) * dk + j] += gT[dir * T + D][j] * lc1(dir, D) * lc2_at(dir, D);
      }
      gG[dir] += gLC1[dir][D] * std::pow(base(dir, D), -k_exponent[0]);
      if (rho[dir] >= 0) grho[dir] += gLC1[dir][D] * (-k_exponent[0] * D * lc1(dir, D) / base(dir, D));
      gk_exponent[0] += gLC1[dir][D] * (-std::log(base(dir, D)) * lc1(dir, D));
    }

  fmt::print("\n== backward ==\n");
  if (!per_feature) print("gW", "∂L/∂W = g·vᵀ", gW);
  print("gv", pcmv ? "∂L/∂v = Σ_m a'·C·g" : "∂L/∂v = a'ᵀ·g", gv);
  print("ga", pcmv ? (per_feature ? "∂L/∂a' = Σ_j g·C·v" : "∂L/∂a' = gW ⊙ C") : "∂L/∂a' = gW", ga);
  print("gs", "∂L/∂s = a' ⊙ ga - a · Σ_n a' ⊙ ga   (0 where masked)", gs);
  for (int j = 0; j < width; ++j) {
    const std::string at = per_feature ? fmt::format("[:, :, j={}]", j) : "";
    print("gC_score" + at, per_feature ? "(1/√dk)·gs·q·k" : "gs ⊙ P", gCs[j]);
    if (pcmv) print("gC_value" + at, per_feature ? "a'·g·v" : "gW ⊙ a'", gCv[j]);
    print("gC" + at, pcmv ? "gC_score + gC_value" : "gC_score (no value path without PCM-V)", gC[j]);
  }
  print("gq", "(1/√dk)·(gs ⊙ C)·k", gq);
  print("gk", "(1/√dk)·(gs ⊙ C)ᵀ·q", gk);
  print("gT",
        fmt::format("∂L/∂table: gC summed over the pairs of each (δ, D); rows δ=0 D=0..{0}, then δ=1 "
                    "D=0..{0}",
                    T - 1),
        gT);
  print("gLC1", "∂L/∂LC1 [δ, D] = gT · lc2 (· lc3, summed over j)", gLC1);

  // ---- the op's backward and finite differences ----
  auto tensor = [](const std::vector<double>& x, const Shape& shape) {
    return Tensor::from_vector(x, shape, DType::f64);
  };
  ops::AttentionOptions options;
  options.scheme = scheme;
  options.pcmv = pcmv;
  options.causal = causal;
  options.max_distance = kL;
  options.dropout = kDropout;
  options.dropout_seed = kDropoutSeed;
  options.dropout_offset = kDropoutOffset;
  const Tensor qt = tensor(q_values, {1, 1, T, dk}), kt = tensor(k_values, {1, 1, T, dk}),
               vt = tensor(v_values, {1, 1, T, dk});
  auto parameters = [&] {
    ops::PositionalParameters p;
    p.G = tensor(G, {2, 1});
    p.rho = tensor(rho, {2, 1});
    p.k = tensor(k_exponent, {1});
    if (!lc2.empty()) p.lc2 = tensor(lc2, {2, 1, kL});
    if (!lc3.empty()) p.lc3 = tensor(lc3, {2, 1, kL, dk});
    return p;
  };
  auto loss = [&] {
    const std::vector<double> out =
        ops::attention_forward(qt, kt, vt, Tensor(), parameters(), options).output.to_double_vector();
    double total = 0;
    for (std::size_t e = 0; e < out.size(); ++e) total += out[e] * g_values[e];
    return total;
  };
  const ops::AttentionForward forward = ops::attention_forward(qt, kt, vt, Tensor(), parameters(), options);
  const ops::AttentionGradients op = ops::attention_backward(tensor(g_values, {1, 1, T, dk}), qt, kt, vt, Tensor(),
                                                             parameters(), options, forward.saved);
  double worst_inputs = 0;
  auto compare = [&](const Matrix& mine, const Tensor& theirs) {
    const std::vector<double> values = theirs.to_double_vector();
    for (int r = 0; r < T; ++r)
      for (int c = 0; c < dk; ++c) worst_inputs = std::max(worst_inputs, std::abs(mine[r][c] - values[r * dk + c]));
  };
  compare(o, forward.output);
  compare(gq, op.q);
  compare(gk, op.k);
  compare(gv, op.v);

  fmt::print("\n== parameter gradients: step by step | op backward | finite difference ==\n");
  fmt::print("{:<14} {:>14} {:>14} {:>14} {:>10}\n", "", "step by step", "op", "finite diff.", "rel. err");
  double worst = 0;
  auto report = [&](const std::string& name, std::vector<double>& values, const std::vector<double>& mine,
                    const Tensor& theirs) {
    const std::vector<double> op_values = theirs.to_double_vector();
    for (std::size_t e = 0; e < values.size(); ++e) {
      const double original = values[e], h = 1e-6;
      values[e] = original + h;
      const double plus = loss();
      values[e] = original - h;
      const double minus = loss();
      values[e] = original;
      const double numeric = (plus - minus) / (2 * h);
      const double error = std::max(std::abs(mine[e] - numeric), std::abs(op_values[e] - numeric)) /
                           std::max(std::abs(numeric), 1e-6);
      worst = std::max(worst, error);
      // the element's index in the doc's terms: [δ] for G and rho, [δ,i] for lc2, [δ,i,j] for lc3
      const int index = static_cast<int>(e);
      const std::string at = name == "g_k_exponent" ? ""
                             : name == "glc2"       ? fmt::format("[{},{}]", index / kL, index % kL)
                             : name == "glc3"
                                 ? fmt::format("[{},{},{}]", index / (kL * dk), index / dk % kL, index % dk)
                                 : fmt::format("[{}]", index);
      fmt::print("{:<14} {:>14.8f} {:>14.8f} {:>14.8f} {:>10.1e}\n", name + at, mine[e], op_values[e], numeric, error);
    }
  };
  report("gG", G, gG, op.positional.G);
  report("grho", rho, grho, op.positional.rho);
  report("g_k_exponent", k_exponent, gk_exponent, op.positional.k);  // not gk: that is ∂L/∂keys above
  if (!lc2.empty()) report("glc2", lc2, glc2, op.positional.lc2);
  if (!lc3.empty()) report("glc3", lc3, glc3, op.positional.lc3);
  fmt::print("\nstep by step vs the op: o, gq, gk, gv agree to {:.1e}; parameter gradients agree with finite "
             "differences to {:.1e} (relative)\n",
             worst_inputs, worst);
  const bool passed = worst_inputs < 1e-12 && worst < 1e-6;
  fmt::print("{}\n", passed ? "ok" : "FAILED");
  return passed ? 0 : 1;
}

}  // namespace agf::cli
