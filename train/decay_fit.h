#pragma once
// Which law a learned positional coefficient C(D) decays by (`agf inspect`): does AGF-M's curve, with its
// free per-distance lc2, stay the power law LC1 starts it as? Two least-squares fits of y = ln|C(D)| over the
// given distances:
//
//   power law     |C(D)| ≈ G / (1 + D/r)^k    y ≈ ln G − k·ln(1 + D/r)   (LC1 with G, r and k all free)
//   exponential   |C(D)| ≈ G · exp(−λ·D)      y ≈ ln G − λ·D             (the shape of ALiBi-mult)
//
// The exponential is a line in D, solved in closed form. For a fixed r the power law is a line in
// x = ln(1 + D/r), so r is found by minimize_scalar over ln r ∈ [ln 0.01, ln 10⁶] with (ln G, k) in closed
// form at each r. As r → ∞ with k/r = λ the power law tends to the exponential, so its residual is never
// much above the exponential's: a curve is called a power law only when the power law's residual is at most
// half the exponential's.
//
// When the best r sits at either end of its range the power law has degenerated: at r = 0.01 into a pure
// G'·D^(−k) (G itself means nothing then), at r = 10⁶ into the exponential (G and k mean nothing);
// r_at_bound says so.
//
// The verdict, first match:
//   reaches_zero  C(D) = 0 somewhere (an underflow, or a learned LC2 of exactly 0): no logarithm, no fit
//   changes_sign  C takes both signs: not a decay at all
//   flat          max y − min y < 0.05 (|C| varies by under 5 %): no decay to tell apart
//   neither       the power law's R² < 0.9 (R² = 1 − residual / Σ(y − ȳ)², in y)
//   power_law     the exponential's residual ≥ 2 × the power law's
//   exponential   otherwise: the exponential, with one parameter fewer, fits within a factor 2
#include <string_view>
#include <vector>

namespace agf::train {

enum class DecayLaw { power_law, exponential, neither, flat, changes_sign, reaches_zero };

inline constexpr double kPowerLawMinR = 0.01, kPowerLawMaxR = 1e6;  // the search range of r

std::string_view decay_law_name(DecayLaw law);

struct DecayFit {
  double power_G = 0, power_r = 0, power_k = 0, power_r2 = 0;  // |C| ≈ G / (1 + D/r)^k
  bool r_at_bound = false;  // r at kPowerLawMinR or kPowerLawMaxR: the power law degenerated
  double exponential_G = 0, exponential_lambda = 0, exponential_r2 = 0;  // |C| ≈ G·exp(−λ·D)
  DecayLaw law = DecayLaw::neither;
};

// `distances` (positive) and `coefficients` C(D) of one curve (finite), at least 3 points.
DecayFit fit_decay(const std::vector<double>& distances, const std::vector<double>& coefficients);

}  // namespace agf::train
