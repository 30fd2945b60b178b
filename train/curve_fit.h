#pragma once
// Fits the paper's learning curve acc(t) = a - b·t^(-c) to (step, accuracy) points; `a` is the
// extrapolated upper bound, so it is held to a <= ceiling (100 for an accuracy in per cent): a fit that
// prefers a larger a gets the best curve with a = ceiling instead. For a fixed c the model is linear in
// (a, b), solved in closed form by least squares (with a fixed at the ceiling when the free solution exceeds
// it: the residual is a convex quadratic in (a, b), so the constrained optimum then lies on a = ceiling);
// c is then found by a coarse grid over [0.01, 4] refined with golden-section search on that residual
// (minimize_scalar.h).
#include <cstdint>
#include <vector>

namespace agf::train {

struct PowerLawFit {
  double a = 0, b = 0, c = 0;
  double rmse = 0;  // root-mean-square residual
  // False when the data identify no ceiling: a was held at the ceiling (at_ceiling), or the best exponent
  // sits at the edge of the search (c -> 0 or c -> 4). Early in training a curve can still be log-linear
  // (a - b·t^(-c) ≈ a - b + b·c·ln t as c -> 0): a and b then grow without bound together, until a reaches
  // the ceiling.
  bool identified = true;
  // True when the free fit's a exceeded `ceiling` and a = ceiling was imposed: the data do not bound a below
  // the largest possible value, so a ceiling read from this fit says nothing.
  bool at_ceiling = false;
};

PowerLawFit fit_power_law(const std::vector<double>& steps, const std::vector<double>& accuracy, double ceiling = 100);

// A 95 % interval for the ceiling a, by a moving-block bootstrap of the fit's residuals: each resample is the
// fitted curve plus the residuals re-drawn as blocks of ⌈n^(1/3)⌉ consecutive points (a learning curve's
// residuals are correlated from one validation to the next, which resampling single points would hide), fitted
// again under the same ceiling; the interval is the 2.5th and 97.5th percentiles of the resamples' a. Its high
// end is `ceiling` when the data do not bound a. Deterministic for a given seed.
struct CeilingInterval {
  double low = 0, high = 0;
};

CeilingInterval ceiling_interval(const std::vector<double>& steps, const std::vector<double>& accuracy,
                                 const PowerLawFit& fit, double ceiling = 100, int resamples = 200, uint64_t seed = 1);

}  // namespace agf::train
