#pragma once
// Paired bootstrap resampling over sentences: are two models' scores on the same test sentences different
// beyond the luck of which sentences the test set happens to hold? (Koehn 2004, "Statistical significance
// tests for machine translation evaluation"; sacreBLEU's --paired-bs resamples the same way.)
//
// Each of R resamples draws n sentence indices with replacement, the same draw for both models, and computes
// each model's corpus metric over the drawn sentences: token accuracy = Σ correct / Σ target tokens (or its
// log-odds), or BLEU of the summed n-gram statistics (train/bleu.h). With δ = metric(b) - metric(a) on the
// whole set and δ*_r on resample r:
//   interval  the 2.5th and 97.5th percentiles of δ*  (the percentile interval of the difference), and the 5th
//             and 95th: the 90 % interval whose lying inside ±margin is the equivalence test (two one-sided
//             tests at 5 % each, TOST) of "the two are level"
//   p_value   (1 + #{r : |δ*_r - δ| >= |δ|}) / (1 + R): two-sided, against "no difference", the resampled
//             differences shifted to centre on 0 (as in Berg-Kirkpatrick et al. 2012's test of δ* > 2δ)
// Deterministic for a given seed.
//
// paired_bootstrap_change asks whether b's lead over a changes from one set of sentences to another (the short
// sentences to the long): δ = (metric(far b) - metric(far a)) - (metric(near b) - metric(near a)). Each resample
// redraws the near and the far sentences separately, each set at its own size (a stratified bootstrap, so a
// resample never holds a different share of long sentences), the same draws for both models; interval and p as
// above.
#include <cstdint>
#include <string>
#include <vector>

#include "train/evaluate.h"

namespace agf::train {

// token_accuracy: c / t in %, with c = Σ correct and t = Σ target tokens. token_log_odds: the same proportion
// as log-odds, log(c / (t - c)), the scale on which a lead counts the same at 40 % as at 65 % accuracy (a set
// with none or all right, where that is infinite, takes log((c + ½) / (t - c + ½))). bleu: corpus BLEU.
enum class PairedMetric { token_accuracy, token_log_odds, bleu };

// A token metric (not BLEU) of `correct` right out of `tokens`.
double token_metric(PairedMetric metric, int64_t correct, int64_t tokens);

struct PairedComparison {
  double a = 0, b = 0;             // each model's metric on the whole set (the change: metric(far) - metric(near))
  double difference = 0;           // b - a
  double low = 0, high = 0;        // 95 % interval of the difference
  double low_90 = 0, high_90 = 0;  // 90 % interval of the difference (equivalence tests)
  double p_value = 1;              // two-sided
  int resamples = 0;
  // "b better", "a better" (the interval excludes 0 on that side, p < 0.05) or "not distinguishable".
  std::string verdict() const;
};

// a and b: the same sentences in the same order (index by index; an error names the first mismatch). BLEU
// needs every sentence translated in both.
PairedComparison paired_bootstrap(const std::vector<SentenceScore>& a, const std::vector<SentenceScore>& b,
                                  PairedMetric metric, int resamples = 1000, uint64_t seed = 1);

// near_a and near_b, far_a and far_b: each pair the same sentences in the same order, as above.
PairedComparison paired_bootstrap_change(const std::vector<SentenceScore>& near_a,
                                         const std::vector<SentenceScore>& near_b,
                                         const std::vector<SentenceScore>& far_a,
                                         const std::vector<SentenceScore>& far_b, PairedMetric metric,
                                         int resamples = 1000, uint64_t seed = 1);

}  // namespace agf::train
