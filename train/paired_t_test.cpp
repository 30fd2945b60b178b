#include "train/paired_t_test.h"

#include <cmath>

#include "core/error.h"
#include "train/sample_summary.h"

namespace agf::train {

namespace {

// The continued fraction of I_x(a, b) (valid, and fast to converge, for x < (a + 1)/(a + b + 2)):
//   I_x(a, b) = x^a (1-x)^b / (a·B(a, b)) · 1/(1 + d_1/(1 + d_2/(1 + ...)))
//   d_{2m+1} = -(a + m)(a + b + m)·x / ((a + 2m)(a + 2m + 1)),   d_{2m} = m(b - m)·x / ((a + 2m - 1)(a + 2m))
// evaluated front to back by the modified Lentz method (each step multiplies the value by C_j·D_j).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, tolerance = 1e-15;
  auto guarded = [](double v) { return std::abs(v) < tiny ? tiny : v; };
  double value = tiny, c = tiny, d = 0;
  for (int j = 1; j <= 1000; ++j) {
    double numerator = 1;  // the first term's; then d_{j-1}
    if (j > 1) {
      const int k = j - 1;
      const double m = static_cast<double>(k / 2);
      numerator = k % 2 == 1 ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                             : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    }
    d = 1 / guarded(1 + numerator * d);
    c = guarded(1 + numerator / c);
    value *= c * d;
    if (std::abs(c * d - 1) < tolerance) return value;
  }
  AGF_CHECK(false, "Student's t: the incomplete beta fraction for a = {}, b = {}, x = {} did not converge", a, b, x);
  return value;
}

// The regularized incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b), for x in [0, 1].
double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * incomplete_beta_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * incomplete_beta_fraction(b, a, 1 - x) / b;  // I_x(a, b) = 1 - I_{1-x}(b, a)
}

}  // namespace

double students_t_two_sided_p(double t, double degrees_of_freedom) {
  AGF_CHECK(degrees_of_freedom > 0, "Student's t: needs positive degrees of freedom, got {}", degrees_of_freedom);
  if (std::isinf(t)) return 0;
  const double nu = degrees_of_freedom;
  return regularized_incomplete_beta(nu / 2, 0.5, nu / (nu + t * t));
}

double students_t_critical(double p, double degrees_of_freedom) {
  AGF_CHECK(p > 0 && p <= 1, "Student's t: a two-sided tail probability is in (0, 1], got {}", p);
  double low = 0, high = 1;
  while (students_t_two_sided_p(high, degrees_of_freedom) > p) high *= 2;  // p falls as t grows
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double middle = (low + high) / 2;
    (students_t_two_sided_p(middle, degrees_of_freedom) > p ? low : high) = middle;
  }
  return (low + high) / 2;
}

PairedTTest paired_t_test(const std::vector<double>& differences, double confidence) {
  AGF_CHECK(differences.size() >= 2, "paired t-test: needs at least 2 seeds' differences, got {}", differences.size());
  AGF_CHECK(confidence > 0 && confidence < 1, "paired t-test: confidence must be in (0, 1), got {}", confidence);
  PairedTTest result;
  result.seeds = static_cast<int>(differences.size());
  const double n = static_cast<double>(differences.size());
  const SampleSummary summary = summarize(differences);
  result.mean = summary.mean;
  const double standard_error = summary.standard_deviation / std::sqrt(n);
  if (standard_error == 0) {
    result.low = result.high = result.mean;
    result.p_value = result.mean == 0 ? 1 : 0;
    return result;
  }
  const double nu = n - 1;
  result.p_value = students_t_two_sided_p(result.mean / standard_error, nu);
  const double half_width = students_t_critical(1 - confidence, nu) * standard_error;
  result.low = result.mean - half_width;
  result.high = result.mean + half_width;
  return result;
}

}  // namespace agf::train
