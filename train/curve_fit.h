#pragma once
// Fits the paper's learning curve acc(t) = a - b·t^(-c) to (step, accuracy) points; `a` is the
// extrapolated upper bound. For a fixed c the model is linear in (a, b), solved in closed form by least
// squares; c is then found by a coarse grid over (0, 4] refined with golden-section search on the residual.
#include <vector>

namespace agf::train {

struct PowerLawFit {
  double a = 0, b = 0, c = 0;
  double rmse = 0;  // root-mean-square residual
};

PowerLawFit fit_power_law(const std::vector<double>& steps, const std::vector<double>& accuracy);

}  // namespace agf::train
