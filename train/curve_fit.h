#pragma once
// Fits the paper's learning curve acc(t) = a - b·t^(-c) to (step, accuracy) points; `a` is the
// extrapolated upper bound. For a fixed c the model is linear in (a, b), solved in closed form by least
// squares; c is then found by a coarse grid over (0, 4] refined with golden-section search on the residual.
#include <vector>

namespace agf::train {

struct PowerLawFit {
  double a = 0, b = 0, c = 0;
  double rmse = 0;  // root-mean-square residual
  // False when the best exponent sits at the edge of the search (c -> 0 or c -> 4): early in training a
  // curve can still be log-linear (a - b·t^(-c) ≈ a - b + b·c·ln t as c -> 0), and then no finite ceiling
  // a is identifiable from the data — a and b grow without bound together.
  bool identified = true;
};

PowerLawFit fit_power_law(const std::vector<double>& steps, const std::vector<double>& accuracy);

}  // namespace agf::train
