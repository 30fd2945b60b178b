#pragma once
// Student's paired t-test over seeds: is the difference between two rows larger than training's own
// randomness? Each seed s trains both rows (the same data order, the same initial draws where their
// parameters coincide) and gives one difference d_s = metric(b, s) - metric(a, s). With n seeds,
//   d̄ = Σ d_s / n,   s_d² = Σ (d_s - d̄)² / (n - 1),   se = s_d / √n,   t = d̄ / se,   ν = n - 1 degrees of freedom
//   p_value   two-sided: P(|T_ν| ≥ |t|) = I_{ν/(ν+t²)}(ν/2, 1/2), the regularized incomplete beta function
//   interval  d̄ ± t_ν(1 - (1 - confidence)/2)·se
// The paired bootstrap over test sentences (train/paired_bootstrap.h) sees the luck of which sentences the
// test set holds; this sees the luck of the training run. With three seeds (ν = 2) a difference needs
// |t| ≥ 4.30 for p < 0.05, so the test is weak, and it says so by failing rather than by agreeing.
#include <vector>

namespace agf::train {

struct PairedTTest {
  int seeds = 0;
  double mean = 0;           // d̄
  double low = 0, high = 0;  // the interval of d̄ at the requested confidence
  double p_value = 1;        // two-sided, against "no difference"
};

// Needs at least 2 differences. Differences that are all equal have se = 0: p = 0 (1 when they are all 0)
// and the interval is the point d̄.
PairedTTest paired_t_test(const std::vector<double>& differences, double confidence = 0.95);

// Two-sided P(|T_ν| ≥ |t|) of Student's t distribution with ν > 0 degrees of freedom.
double students_t_two_sided_p(double t, double degrees_of_freedom);

// The t with P(|T_ν| ≥ t) = p, for p in (0, 1] (so the 1 - p/2 quantile): bisection on the function above.
double students_t_critical(double p, double degrees_of_freedom);

}  // namespace agf::train
