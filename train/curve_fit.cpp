#include "train/curve_fit.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "train/minimize_scalar.h"
#include "train/percentile.h"

namespace agf::train {

namespace {

// Least squares of y ≈ a - b·x with x = t^(-c) and a <= ceiling; returns the fit and its sum of squared
// residuals. Free: the normal equations. At the ceiling: y - ceiling ≈ -b·x, so b = Σ x·(ceiling - y) / Σ x².
PowerLawFit solve_linear(const std::vector<double>& t, const std::vector<double>& y, double c, double ceiling,
                         double& residual) {
  const double n = static_cast<double>(t.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double x = std::pow(t[i], -c);
    sx += x;
    sy += y[i];
    sxx += x * x;
    sxy += x * y[i];
  }
  const double denominator = n * sxx - sx * sx;
  PowerLawFit fit;
  fit.c = c;
  if (std::abs(denominator) < 1e-300) {
    fit.a = sy / n;
  } else {
    const double slope = (n * sxy - sx * sy) / denominator;  // y = intercept + slope·x
    fit.a = (sy - slope * sx) / n;
    fit.b = -slope;
  }
  if (fit.a > ceiling) {
    fit.a = ceiling;
    fit.b = sxx > 0 ? (ceiling * sx - sxy) / sxx : 0;
    fit.at_ceiling = true;
  }
  residual = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double e = y[i] - (fit.a - fit.b * std::pow(t[i], -c));
    residual += e * e;
  }
  fit.rmse = std::sqrt(residual / n);
  return fit;
}

}  // namespace

PowerLawFit fit_power_law(const std::vector<double>& steps, const std::vector<double>& accuracy, double ceiling) {
  AGF_CHECK(steps.size() == accuracy.size(), "fit_power_law: {} steps but {} accuracies", steps.size(),
            accuracy.size());
  AGF_CHECK(steps.size() >= 3, "fit_power_law: needs at least 3 points, got {}", steps.size());
  for (double t : steps) AGF_CHECK(t > 0, "fit_power_law: steps must be positive, got {}", t);
  auto residual_at = [&](double c) {
    double residual = 0;
    solve_linear(steps, accuracy, c, ceiling, residual);
    return residual;
  };
  constexpr int grid = 400;
  constexpr double c_max = 4.0;
  const double c = minimize_scalar(residual_at, c_max / grid, c_max, grid);  // c on the grid c_max·i/grid, i ≥ 1
  double residual = 0;
  PowerLawFit fit = solve_linear(steps, accuracy, c, ceiling, residual);
  fit.identified = !fit.at_ceiling && fit.c > 2 * c_max / grid && fit.c < c_max - 2 * c_max / grid;
  return fit;
}

CeilingInterval ceiling_interval(const std::vector<double>& steps, const std::vector<double>& accuracy,
                                 const PowerLawFit& fit, double ceiling, int resamples, uint64_t seed) {
  AGF_CHECK(resamples >= 2, "ceiling_interval: needs at least 2 resamples, got {}", resamples);
  const std::size_t n = steps.size();
  AGF_CHECK(n >= 3 && accuracy.size() == n, "ceiling_interval: needs at least 3 points and one accuracy per step");
  std::vector<double> fitted(n), residuals(n);
  for (std::size_t i = 0; i < n; ++i) {
    fitted[i] = fit.a - fit.b * std::pow(steps[i], -fit.c);
    residuals[i] = accuracy[i] - fitted[i];
  }
  const std::size_t block = std::min(n, static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(n)))));
  std::mt19937_64 random(seed);  // the standard fixes its sequence; the modulo below keeps the draws portable
  std::vector<double> ceilings, resampled(n);
  ceilings.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (std::size_t i = 0; i < n; i += block) {
      const std::size_t start = static_cast<std::size_t>(random() % (n - block + 1));
      for (std::size_t j = 0; j < block && i + j < n; ++j) resampled[i + j] = fitted[i + j] + residuals[start + j];
    }
    ceilings.push_back(fit_power_law(steps, resampled, ceiling).a);
  }
  std::sort(ceilings.begin(), ceilings.end());
  return {percentile(ceilings, 0.025), percentile(ceilings, 0.975)};
}

}  // namespace agf::train
