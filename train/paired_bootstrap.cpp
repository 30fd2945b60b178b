#include "train/paired_bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "train/bleu.h"
#include "train/percentile.h"

namespace agf::train {

namespace {

// A metric's sums over a set of sentences, from which the metric is computed.
struct Sums {
  int64_t correct = 0, tokens = 0;
  BleuStatistics bleu;

  void add(const SentenceScore& sentence) {
    correct += sentence.correct;
    tokens += sentence.target_tokens;
    bleu += sentence.bleu;
  }
  double metric(PairedMetric which) const {
    return which == PairedMetric::bleu ? bleu_score(bleu).score : token_metric(which, correct, tokens);
  }
};

}  // namespace

double token_metric(PairedMetric metric, int64_t correct, int64_t tokens) {
  AGF_CHECK(metric != PairedMetric::bleu, "token_metric: BLEU is not a token metric");
  if (metric == PairedMetric::token_log_odds) {
    const double half = correct == 0 || correct == tokens ? 0.5 : 0.0;  // only where log(c / (t - c)) is infinite
    return std::log((static_cast<double>(correct) + half) / (static_cast<double>(tokens - correct) + half));
  }
  return tokens > 0 ? 100.0 * static_cast<double>(correct) / static_cast<double>(tokens) : 0.0;
}

std::string PairedComparison::verdict() const {
  if (p_value < 0.05 && low > 0) return "b better";
  if (p_value < 0.05 && high < 0) return "a better";
  return "not distinguishable";
}

namespace {

// One set of paired sentences, entering the statistic with `sign`.
struct Stratum {
  const std::vector<SentenceScore>& a;
  const std::vector<SentenceScore>& b;
  double sign;
};

void check_paired(const std::vector<SentenceScore>& a, const std::vector<SentenceScore>& b, PairedMetric metric) {
  AGF_CHECK(a.size() == b.size(), "paired bootstrap: a scores {} sentences and b {}: the two must score the same set",
            a.size(), b.size());
  AGF_CHECK(!a.empty(), "paired bootstrap: no sentences");
  for (std::size_t i = 0; i < a.size(); ++i) {
    AGF_CHECK(a[i].index == b[i].index && a[i].target_tokens == b[i].target_tokens,
              "paired bootstrap: sentence {} is pair {} with {} target tokens on one side and pair {} with {} on the "
              "other: the two must score the same set in the same order",
              i, a[i].index, a[i].target_tokens, b[i].index, b[i].target_tokens);
    AGF_CHECK(metric != PairedMetric::bleu || (a[i].translated && b[i].translated),
              "paired bootstrap: BLEU needs every sentence translated, and pair {} is not (agf eval --bleu-sentences)",
              a[i].index);
    AGF_CHECK(metric != PairedMetric::bleu || a[i].reference == b[i].reference,
              "paired bootstrap: pair {} has another reference on each side: the two must score the same split",
              a[i].index);
  }
}

// Each model's Σ_s sign_s · metric(stratum s) over the whole strata, and the bootstrap of their difference: each
// resample redraws every stratum at its own size (in order, stratum by stratum), the same indices for both.
PairedComparison stratified_bootstrap(const std::vector<Stratum>& strata, PairedMetric metric, int resamples,
                                      uint64_t seed) {
  AGF_CHECK(resamples >= 1, "paired bootstrap: needs at least 1 resample, got {}", resamples);
  PairedComparison result;
  for (const Stratum& stratum : strata) {
    check_paired(stratum.a, stratum.b, metric);
    Sums whole_a, whole_b;
    for (std::size_t i = 0; i < stratum.a.size(); ++i) {
      whole_a.add(stratum.a[i]);
      whole_b.add(stratum.b[i]);
    }
    result.a += stratum.sign * whole_a.metric(metric);
    result.b += stratum.sign * whole_b.metric(metric);
  }
  result.difference = result.b - result.a;
  result.resamples = resamples;
  std::mt19937_64 random(seed);  // the standard fixes its sequence; the modulo keeps the draws portable
  std::vector<double> differences;
  differences.reserve(static_cast<std::size_t>(resamples));
  int64_t as_far = 0;
  for (int r = 0; r < resamples; ++r) {
    double difference = 0;
    for (const Stratum& stratum : strata) {
      Sums sample_a, sample_b;
      for (std::size_t draw = 0; draw < stratum.a.size(); ++draw) {
        const std::size_t i = static_cast<std::size_t>(random() % stratum.a.size());
        sample_a.add(stratum.a[i]);
        sample_b.add(stratum.b[i]);
      }
      difference += stratum.sign * (sample_b.metric(metric) - sample_a.metric(metric));
    }
    differences.push_back(difference);
    as_far += std::abs(difference - result.difference) >= std::abs(result.difference);
  }
  std::sort(differences.begin(), differences.end());
  result.low = percentile(differences, 0.025);
  result.high = percentile(differences, 0.975);
  result.low_90 = percentile(differences, 0.05);
  result.high_90 = percentile(differences, 0.95);
  result.p_value = static_cast<double>(1 + as_far) / static_cast<double>(1 + resamples);
  return result;
}

}  // namespace

PairedComparison paired_bootstrap(const std::vector<SentenceScore>& a, const std::vector<SentenceScore>& b,
                                  PairedMetric metric, int resamples, uint64_t seed) {
  return stratified_bootstrap({{a, b, +1.0}}, metric, resamples, seed);
}

PairedComparison paired_bootstrap_change(const std::vector<SentenceScore>& near_a,
                                         const std::vector<SentenceScore>& near_b,
                                         const std::vector<SentenceScore>& far_a,
                                         const std::vector<SentenceScore>& far_b, PairedMetric metric, int resamples,
                                         uint64_t seed) {
  return stratified_bootstrap({{near_a, near_b, -1.0}, {far_a, far_b, +1.0}}, metric, resamples, seed);
}

}  // namespace agf::train
