#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "train/decay_fit.h"
#include "train/minimize_scalar.h"

using agf::train::DecayLaw;
using agf::train::fit_decay;

namespace {

std::vector<double> distances_1_to(int n) {
  std::vector<double> d;
  for (int i = 1; i <= n; ++i) d.push_back(i);
  return d;
}

}  // namespace

TEST_CASE("minimize_scalar finds the lower of two dips, not the one golden section alone would find", "[train][fit]") {
  // f has a shallow dip at 1 and a deeper one at 3.2; a golden-section search over [0, 4] alone starts with
  // probes at 1.53 and 2.47 and can keep the wrong one. The grid sees both.
  auto f = [](double x) { return -0.5 * std::exp(-(x - 1) * (x - 1) * 20) - std::exp(-(x - 3.2) * (x - 3.2) * 50); };
  CHECK(agf::train::minimize_scalar(f, 0.0, 4.0) == Approx(3.2).margin(1e-6));
  CHECK(agf::train::minimize_scalar([](double x) { return (x - 0.3) * (x - 0.3); }, -1.0, 1.0) ==
        Approx(0.3).margin(1e-9));
}

TEST_CASE("fit_decay recovers a power law and calls it one", "[train][fit]") {
  const auto d = distances_1_to(40);
  std::vector<double> c;
  for (double x : d) c.push_back(1.3 / std::pow(1 + x / 24, 2.0));  // LC1 at G = 1.3, r = 24, k = 2
  const auto fit = fit_decay(d, c);
  CHECK(fit.law == DecayLaw::power_law);
  CHECK(fit.power_G == Approx(1.3).epsilon(1e-5));
  CHECK(fit.power_r == Approx(24).epsilon(1e-4));
  CHECK(fit.power_k == Approx(2).epsilon(1e-4));
  CHECK(fit.power_r2 == Approx(1).margin(1e-9));
  CHECK_FALSE(fit.r_at_bound);
  CHECK(fit.exponential_r2 < 0.999);
  // Negative throughout is the same decay (|C| is fitted).
  for (double& v : c) v = -v;
  CHECK(fit_decay(d, c).law == DecayLaw::power_law);
}

TEST_CASE("fit_decay recovers an exponential, which the power law only approaches", "[train][fit]") {
  const auto d = distances_1_to(40);
  std::vector<double> c;
  for (double x : d) c.push_back(0.8 * std::exp(-0.05 * x));  // ALiBi-mult's shape
  const auto fit = fit_decay(d, c);
  CHECK(fit.law == DecayLaw::exponential);
  CHECK(fit.exponential_G == Approx(0.8).epsilon(1e-9));
  CHECK(fit.exponential_lambda == Approx(0.05).epsilon(1e-9));
  CHECK(fit.r_at_bound);  // the power law's best imitation: r → ∞ with k/r → λ
  CHECK(fit.power_r == Approx(agf::train::kPowerLawMaxR).epsilon(0.02));
  CHECK(fit.power_k / fit.power_r == Approx(0.05).epsilon(1e-2));
}

TEST_CASE("fit_decay: flat, sign-changing and shapeless curves get their own verdicts", "[train][fit]") {
  const auto d = distances_1_to(30);
  std::vector<double> flat, crossing, shapeless;
  for (double x : d) {
    flat.push_back(0.9 + 0.01 * std::sin(x));
    crossing.push_back(1.0 - x / 20);
    shapeless.push_back(0.2 + 4.8 * static_cast<double>(static_cast<int>(x) * 37 % 101) / 100);  // scattered
  }
  crossing[19] = 0.01;  // C(20) would be exactly 0
  CHECK(fit_decay(d, flat).law == DecayLaw::flat);
  CHECK(fit_decay(d, crossing).law == DecayLaw::changes_sign);
  CHECK(fit_decay(d, shapeless).law == DecayLaw::neither);
  CHECK(decay_law_name(DecayLaw::power_law) == "power law");
  CHECK(fit_decay({1, 2, 3}, {1, 0, 1}).law == DecayLaw::reaches_zero);
  CHECK_THROWS_WITH(fit_decay({1, 2, 3}, {1, NAN, 1}), Catch::Contains("C(2) = nan is not finite"));
  // A pure power law D^−1.5 (no bend): r runs to its lower bound, k is still the exponent.
  std::vector<double> pure;
  for (double x : d) pure.push_back(std::pow(x, -1.5));
  const auto degenerate = fit_decay(d, pure);
  CHECK(degenerate.r_at_bound);
  CHECK(degenerate.power_k == Approx(1.5).epsilon(1e-2));
  CHECK(degenerate.law == DecayLaw::power_law);
  CHECK_THROWS_WITH(fit_decay({1, 2}, {1, 1}), Catch::Contains("at least 3 points"));
}
