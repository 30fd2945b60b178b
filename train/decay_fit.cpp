#include "train/decay_fit.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "train/minimize_scalar.h"

namespace agf::train {

namespace {

constexpr double kFlatSpread = 0.05, kMinimumR2 = 0.9, kPowerLawResidualRatio = 2.0;

// y ≈ intercept + slope·x by least squares.
struct Line {
  double intercept = 0, slope = 0, residual = 0;  // residual: Σ (y − fit)²
};

template <typename X>
Line fit_line(const std::vector<double>& y, X&& x_of) {
  const double n = static_cast<double>(y.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double x = x_of(i);
    sx += x, sy += y[i], sxx += x * x, sxy += x * y[i];
  }
  const double denominator = n * sxx - sx * sx;
  Line line;
  line.slope = std::abs(denominator) < 1e-300 ? 0 : (n * sxy - sx * sy) / denominator;
  line.intercept = (sy - line.slope * sx) / n;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = y[i] - (line.intercept + line.slope * x_of(i));
    line.residual += e * e;
  }
  return line;
}

}  // namespace

std::string_view decay_law_name(DecayLaw law) {
  switch (law) {
    case DecayLaw::power_law: return "power law";
    case DecayLaw::exponential: return "exponential fits as well";
    case DecayLaw::neither: return "neither";
    case DecayLaw::flat: return "flat";
    case DecayLaw::changes_sign: return "changes sign";
    case DecayLaw::reaches_zero: return "reaches zero";
  }
  return "?";
}

DecayFit fit_decay(const std::vector<double>& distances, const std::vector<double>& coefficients) {
  AGF_CHECK(distances.size() == coefficients.size(), "fit_decay: {} distances but {} coefficients", distances.size(),
            coefficients.size());
  AGF_CHECK(distances.size() >= 3, "fit_decay: needs at least 3 points, got {}", distances.size());
  std::vector<double> y(coefficients.size());
  bool positive = false, negative = false, zero = false;
  for (std::size_t i = 0; i < y.size(); ++i) {
    AGF_CHECK(distances[i] > 0, "fit_decay: distances must be positive, got {}", distances[i]);
    AGF_CHECK(std::isfinite(coefficients[i]), "fit_decay: C({}) = {} is not finite", distances[i], coefficients[i]);
    if (coefficients[i] == 0) {
      zero = true;
      continue;
    }
    (coefficients[i] > 0 ? positive : negative) = true;
    y[i] = std::log(std::abs(coefficients[i]));
  }
  DecayFit fit;
  if (zero) {
    fit.law = DecayLaw::reaches_zero;
    return fit;
  }
  const Line exponential = fit_line(y, [&](std::size_t i) { return distances[i]; });
  auto power_at = [&](double log_r) {
    const double r = std::exp(log_r);
    return fit_line(y, [&](std::size_t i) { return std::log1p(distances[i] / r); });
  };
  const double low = std::log(kPowerLawMinR), high = std::log(kPowerLawMaxR);
  const double log_r = minimize_scalar([&](double u) { return power_at(u).residual; }, low, high);
  const Line power = power_at(log_r);

  double mean = 0, total = 0;
  for (double v : y) mean += v / static_cast<double>(y.size());
  for (double v : y) total += (v - mean) * (v - mean);
  auto r2 = [&](double residual) { return total > 0 ? 1 - residual / total : 1.0; };
  fit.power_G = std::exp(power.intercept), fit.power_r = std::exp(log_r), fit.power_k = -power.slope;
  fit.r_at_bound = std::min(log_r - low, high - log_r) < 1e-3 * (high - low);
  fit.power_r2 = r2(power.residual);
  fit.exponential_G = std::exp(exponential.intercept), fit.exponential_lambda = -exponential.slope;
  fit.exponential_r2 = r2(exponential.residual);
  const auto [lowest, highest] = std::minmax_element(y.begin(), y.end());
  if (positive && negative) {
    fit.law = DecayLaw::changes_sign;
  } else if (*highest - *lowest < kFlatSpread) {
    fit.law = DecayLaw::flat;
  } else if (fit.power_r2 < kMinimumR2) {
    fit.law = DecayLaw::neither;
  } else if (exponential.residual >= kPowerLawResidualRatio * power.residual) {
    fit.law = DecayLaw::power_law;
  } else {
    fit.law = DecayLaw::exponential;
  }
  return fit;
}

}  // namespace agf::train
