#include "train/experiment_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "train/curve_fit.h"
#include "train/paired_bootstrap.h"
#include "train/paired_t_test.h"
#include "train/sample_summary.h"
#include "train/sentence_scores.h"
#include "train/svg_plot.h"

namespace agf::train {

namespace {

std::string format_mean(const std::vector<double>& values, int decimals) {
  if (values.empty()) return "—";
  const SampleSummary summary = summarize(values);
  if (values.size() < 2) return fmt::format("{:.{}f}", summary.mean, decimals);
  return fmt::format("{:.{}f} ± {:.{}f}", summary.mean, decimals, summary.standard_deviation, decimals);
}

// One metric of one split over a row's runs (the runs that evaluated that split).
template <typename Metric>
std::vector<double> split_values(const std::vector<GridRun>& runs, const std::string& split, Metric metric) {
  std::vector<double> values;
  for (const GridRun& run : runs) {
    const auto found = run.splits.find(split);
    if (found != run.splits.end()) values.push_back(metric(found->second));
  }
  return values;
}

// A row's mean validation accuracy curve over the validations every seed reached (early stopping ends seeds
// at different steps); `aligned` is false when the seeds validated at different steps (then it is empty).
struct MeanCurve {
  std::vector<double> steps, accuracy;
  bool aligned = true;
};

MeanCurve mean_validation_curve(const std::vector<GridRun>& runs) {
  std::size_t points = runs.front().curve_steps.size();
  for (const GridRun& run : runs) points = std::min(points, run.curve_steps.size());
  MeanCurve curve;
  curve.steps.assign(runs.front().curve_steps.begin(), runs.front().curve_steps.begin() + points);
  curve.accuracy.assign(points, 0.0);
  for (const GridRun& run : runs) {
    if (!std::equal(curve.steps.begin(), curve.steps.end(), run.curve_steps.begin())) return {{}, {}, false};
    for (std::size_t i = 0; i < points; ++i)
      curve.accuracy[i] += run.curve_accuracy[i] / static_cast<double>(runs.size());
  }
  return curve;
}

// The fit of the row's mean validation curve after the warmup as "a [low, high] | b | c". The warmup's rise is
// no power law of t (it follows the learning rate up), so its validations would only bend the fit.
std::string fit_columns(const std::vector<GridRun>& runs, int64_t warmup) {
  MeanCurve curve = mean_validation_curve(runs);
  if (!curve.aligned) return "— (seeds validated at other steps) | — | —";
  const auto first = std::upper_bound(curve.steps.begin(), curve.steps.end(), static_cast<double>(warmup));
  const auto skipped = first - curve.steps.begin();
  curve.steps.erase(curve.steps.begin(), first);
  curve.accuracy.erase(curve.accuracy.begin(), curve.accuracy.begin() + skipped);
  if (curve.steps.size() < 3) return "— | — | —";
  const PowerLawFit fit = fit_power_law(curve.steps, curve.accuracy);
  if (fit.at_ceiling)
    return fmt::format("not identified (a free fit puts a above 100) | {:.3g} | {:.3f}", fit.b, fit.c);
  if (!fit.identified) return fmt::format("not identified (c = {:.2f}, at the end of its range) | — | —", fit.c);
  const CeilingInterval interval = ceiling_interval(curve.steps, curve.accuracy, fit);
  return fmt::format("{:.2f} [{:.2f}, {:.2f}] | {:.3g} | {:.3f}", fit.a, interval.low, interval.high, fit.b, fit.c);
}

// A row's test sentences with its seeds pooled: per sentence, the seeds' counts and BLEU statistics summed, so
// that the resampled metric is the row's over all its seeds' outputs.
std::vector<SentenceScore> pooled_test_sentences(const std::vector<GridRun>& runs) {
  std::vector<SentenceScore> pooled;
  for (const GridRun& run : runs) {
    const std::vector<SentenceScore> sentences = read_sentence_scores(run.splits.at("test").sentences_file);
    if (pooled.empty()) {
      pooled = sentences;
      continue;
    }
    AGF_CHECK(sentences.size() == pooled.size(), "experiment: {} has {} test sentences, another seed {}",
              run.splits.at("test").sentences_file, sentences.size(), pooled.size());
    for (std::size_t i = 0; i < pooled.size(); ++i) {
      AGF_CHECK(sentences[i].index == pooled[i].index, "experiment: {} line {}: sentence {} where another seed has {}",
                run.splits.at("test").sentences_file, i + 1, sentences[i].index, pooled[i].index);
      pooled[i].target_tokens += sentences[i].target_tokens;
      pooled[i].correct += sentences[i].correct;
      pooled[i].nll += sentences[i].nll;
      pooled[i].translated = pooled[i].translated && sentences[i].translated;
      pooled[i].bleu += sentences[i].bleu;
    }
  }
  return pooled;
}

bool has_test(const std::vector<GridRun>& runs) {
  return !runs.empty() && std::all_of(runs.begin(), runs.end(), [](const GridRun& run) {
    return run.splits.contains("test") && !run.splits.at("test").sentences_file.empty();
  });
}

// A row's test token accuracy by source-length bucket: per bucket, each seed's accuracy (seeds with pairs in
// it), the bucket's pairs and their mean source length.
struct BucketAccuracies {
  std::vector<std::vector<double>> per_seed;
  std::vector<int64_t> pairs;
  std::vector<double> mean_source_tokens;
};

BucketAccuracies bucket_accuracies(const std::vector<GridRun>& runs, const std::vector<int64_t>& bounds) {
  BucketAccuracies result;
  for (const GridRun& run : runs) {
    const std::vector<LengthBucket> buckets = length_buckets(read_sentence_scores(run.splits.at("test").sentences_file),
                                                             bounds);
    if (result.per_seed.empty()) {  // every seed has the same test split: its shape from the first
      result.per_seed.resize(buckets.size());
      for (const LengthBucket& bucket : buckets) {
        result.pairs.push_back(bucket.pairs);
        result.mean_source_tokens.push_back(
            bucket.pairs > 0 ? static_cast<double>(bucket.source_tokens) / static_cast<double>(bucket.pairs) : 0.0);
      }
    }
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b].pairs > 0) result.per_seed[b].push_back(buckets[b].token_accuracy());
    }
  }
  return result;
}

std::string signed_value(double value, int decimals) { return fmt::format("{:+.{}f}", value, decimals); }

// "p = 0.012", or "p < 0.001" (for the bootstrap the least p 1,000 resamples can give is 1/1001).
std::string p_text(double p_value) {
  return p_value < 0.001 ? std::string("p < 0.001") : fmt::format("p = {:.3f}", p_value);
}

// "+1.20 [+0.40, +2.00], p = 0.012"
std::string difference_text(double difference, double low, double high, double p_value, int decimals = 2) {
  return fmt::format("{} [{}, {}], {}", signed_value(difference, decimals), signed_value(low, decimals),
                     signed_value(high, decimals), p_text(p_value));
}

// The runs of the seeds both rows of a claim have, in the same order (empty while either row has no test
// records).
struct SharedSeeds {
  std::vector<GridRun> a, b;
};

SharedSeeds shared_seeds(const GridReport& report, const PaperClaim& claim) {
  SharedSeeds shared;
  const auto a = report.runs.find(claim.a), b = report.runs.find(claim.b);
  if (a == report.runs.end() || b == report.runs.end() || !has_test(a->second) || !has_test(b->second)) return shared;
  for (const GridRun& run_b : b->second) {
    for (const GridRun& run_a : a->second) {
      if (run_a.seed != run_b.seed) continue;
      shared.a.push_back(run_a);
      shared.b.push_back(run_b);
    }
  }
  return shared;
}

// A claim about two rows of a grid with a planned number of seeds, before both rows have test records: a row
// that says so, `first_cells` then `dashes` empty columns. A claim about a row the grid does not run is left
// out ("").
std::string not_started_row(const GridReport& report, const PaperClaim& claim, const std::string& first_cells,
                            int dashes) {
  const auto in_grid = [&](const std::string& label) {
    return std::find(report.labels.begin(), report.labels.end(), label) != report.labels.end();
  };
  if (report.seeds <= 0 || !in_grid(claim.a) || !in_grid(claim.b)) return "";
  std::string row = "| " + first_cells + " |";
  for (int i = 0; i < dashes; ++i) row += " — |";
  return row + fmt::format(" pending (0 of {} seeds) |\n", report.seeds);
}

// "pending (2 of 3 seeds)" while the claim's rows lack some of report.seeds, else the verdict.
std::string verdict_text(const GridReport& report, const SharedSeeds& shared, int direction,
                         const PairedComparison& sentences, const std::vector<double>& seed_differences,
                         const VerdictWords& words = {}) {
  if (static_cast<int>(shared.a.size()) < report.seeds)
    return fmt::format("pending ({} of {} seeds)", shared.a.size(), report.seeds);
  return claim_verdict(direction, sentences, seed_differences, words);
}

// A token metric (train/paired_bootstrap.h) of the sentences `keep` selects.
template <typename Keep>
double token_metric_of(const std::vector<SentenceScore>& sentences, PairedMetric metric, Keep keep) {
  int64_t correct = 0, tokens = 0;
  for (const SentenceScore& sentence : sentences) {
    if (!keep(sentence)) continue;
    correct += sentence.correct;
    tokens += sentence.target_tokens;
  }
  return token_metric(metric, correct, tokens);
}

// Each seed's difference, "+1.20, +0.80, +1.00".
std::string seed_list(const std::vector<double>& differences, int decimals) {
  std::string text;
  for (double d : differences) text += (text.empty() ? "" : ", ") + signed_value(d, decimals);
  return text;
}

// The paired t-test of the seeds' differences, "+1.00 [+0.50, +1.50], p = 0.012", or "—" below two seeds.
std::string seed_test_text(const std::vector<double>& differences, int decimals) {
  if (differences.size() < 2) return "—";
  const PairedTTest seeds = paired_t_test(differences);
  return difference_text(seeds.mean, seeds.low, seeds.high, seeds.p_value, decimals);
}

std::vector<SentenceScore> test_sentences(const GridRun& run) {
  return read_sentence_scores(run.splits.at("test").sentences_file);
}

// One row per claim: over the seeds both rows have, the paired bootstrap over the test sentences whose source
// is longer than `longer_than_tokens` (-1: all) with those seeds pooled, each seed's own difference and their
// paired t-test, and the verdict ("pending" while either row lacks some of report.seeds).
std::string claims_rows(const GridReport& report, const std::vector<PaperClaim>& claims_to_test,
                        int64_t longer_than_tokens) {
  std::string rows;
  for (const PaperClaim& claim : claims_to_test) {
    const SharedSeeds shared = shared_seeds(report, claim);
    if (shared.a.empty()) {
      rows += not_started_row(report, claim, fmt::format("{} vs {} | {}", claim.b, claim.a, claim.paper), 5);
      continue;
    }
    const auto kept = [&](const SentenceScore& s) { return s.source_tokens > longer_than_tokens; };
    auto pooled_a = pooled_test_sentences(shared.a), pooled_b = pooled_test_sentences(shared.b);
    std::erase_if(pooled_a, [&](const SentenceScore& s) { return !kept(s); });
    std::erase_if(pooled_b, [&](const SentenceScore& s) { return !kept(s); });
    if (pooled_a.empty()) continue;  // no test sentence that long
    std::vector<double> seed_differences;
    for (std::size_t s = 0; s < shared.a.size(); ++s) {
      seed_differences.push_back(token_metric_of(test_sentences(shared.b[s]), PairedMetric::token_accuracy, kept) -
                                 token_metric_of(test_sentences(shared.a[s]), PairedMetric::token_accuracy, kept));
    }
    const PairedComparison accuracy = paired_bootstrap(pooled_a, pooled_b, PairedMetric::token_accuracy);
    const PairedComparison bleu = paired_bootstrap(pooled_a, pooled_b, PairedMetric::bleu);
    rows += fmt::format("| {} vs {} | {} | {:.2f} vs {:.2f} | {} | {} | {} | {} | {} |\n", claim.b, claim.a,
                        claim.paper, accuracy.b, accuracy.a,
                        difference_text(accuracy.difference, accuracy.low, accuracy.high, accuracy.p_value),
                        difference_text(bleu.difference, bleu.low, bleu.high, bleu.p_value),
                        seed_list(seed_differences, 2), seed_test_text(seed_differences, 2),
                        verdict_text(report, shared, claim.direction, accuracy, seed_differences));
  }
  return rows;
}

// One row per claim: does b's lead grow from the test sentences whose source has at most `training_length`
// tokens (near) to the longer ones (far), on the scale of `metric` (accuracy points or log-odds)? The change
// (b − a far) − (b − a near), by the stratified paired bootstrap (train/paired_bootstrap.h) with the seeds
// pooled, and each seed's own change with their paired t-test; verdict "grows" / "shrinks" where both find it
// at p < 0.05.
std::string growth_rows(const GridReport& report, const std::vector<PaperClaim>& claims_to_test,
                        int64_t training_length, PairedMetric metric) {
  const auto is_far = [&](const SentenceScore& s) { return s.source_tokens > training_length; };
  const auto is_near = [&](const SentenceScore& s) { return !is_far(s); };
  const int decimals = metric == PairedMetric::token_log_odds ? 3 : 2;
  std::string rows;
  for (const PaperClaim& claim : claims_to_test) {
    const SharedSeeds shared = shared_seeds(report, claim);
    if (shared.a.empty()) {
      rows += not_started_row(report, claim, fmt::format("{} vs {}", claim.b, claim.a), 5);
      continue;
    }
    const auto pooled_a = pooled_test_sentences(shared.a), pooled_b = pooled_test_sentences(shared.b);
    std::vector<SentenceScore> near_a, near_b, far_a, far_b;
    for (std::size_t i = 0; i < pooled_a.size(); ++i) {
      (is_far(pooled_a[i]) ? far_a : near_a).push_back(pooled_a[i]);
      (is_far(pooled_b[i]) ? far_b : near_b).push_back(pooled_b[i]);
    }
    if (near_a.empty() || far_a.empty()) continue;  // nothing to compare
    std::vector<double> seed_changes;
    for (std::size_t s = 0; s < shared.a.size(); ++s) {
      const auto a = test_sentences(shared.a[s]), b = test_sentences(shared.b[s]);
      const double change = (token_metric_of(b, metric, is_far) - token_metric_of(a, metric, is_far)) -
                            (token_metric_of(b, metric, is_near) - token_metric_of(a, metric, is_near));
      seed_changes.push_back(change);
    }
    const auto all = [](const SentenceScore&) { return true; };
    const double near_lead = token_metric_of(near_b, metric, all) - token_metric_of(near_a, metric, all);
    const double far_lead = token_metric_of(far_b, metric, all) - token_metric_of(far_a, metric, all);
    const PairedComparison change = paired_bootstrap_change(near_a, near_b, far_a, far_b, metric);
    rows += fmt::format("| {} vs {} | {} | {} | {} | {} | {} | {} |\n", claim.b, claim.a,
                        signed_value(near_lead, decimals), signed_value(far_lead, decimals),
                        difference_text(change.difference, change.low, change.high, change.p_value, decimals),
                        seed_list(seed_changes, decimals), seed_test_text(seed_changes, decimals),
                        verdict_text(report, shared, +1, change, seed_changes, {"grows", "shrinks"}));
  }
  return rows;
}

}  // namespace

std::vector<PaperClaim> paper_claims() {
  return {
      {"vanilla", "agf-b", 0, "AGF without PCM-V is level with Vanilla (70.45 vs 70.59)"},
      {"agf-b", "agf-b+pcmv", +1, "PCM-V improves AGF (70.73 vs 70.45)"},
      {"vanilla", "agf-b+pcmv", +1, "AGF + PCM-V is ahead of Vanilla (70.73 vs 70.59)"},
      {"agf-b+pcmv", "agf-m+pcmv", +1, "AGF-M + PCM-V is ahead of AGF + PCM-V (70.76 vs 70.73)"},
      {"agf-m+pcmv", "agf-m+pcmv+abs-pe", +1,
       "adding the sinusoidal PE is best (70.92 vs 70.76, with an undefined SCO)"},
      {"vanilla", "agf-m+pcmv+abs-pe", +1, "the best AGF row is ahead of Vanilla (70.92 vs 70.59)"},
      {"alibi", "alibi-mult+pcmv", +1,
       "ALiBi in the multiplicative framework with PCM-V improves strongly (no figure)"},
  };
}

std::vector<PaperClaim> extrapolation_claims() {
  return {
      {"alibi-mult+pcmv", "agf-b+pcmv", +1,
       "a power-law coefficient extrapolates better than an exponential one (both multiplicative, with PCM-V)"},
      {"alibi-mult+pcmv", "agf-m+pcmv", +1, "the same, for AGF-M + PCM-V"},
      {"alibi", "agf-b", +1,
       "AGF's power law against ALiBi's linear bias, an exponential factor exp(−slope·D) on the weights"},
      {"alibi", "kerple-log", +1,
       "KERPLE-log's logarithmic bias, a power-law factor (1 + r2·D)^(−r1), against ALiBi's exponential"},
  };
}

std::string claim_verdict(int direction, const PairedComparison& sentences, const std::vector<double>& seed_differences,
                          const VerdictWords& words) {
  if (seed_differences.size() < 2) return "untested (one seed: nothing to compare training's randomness with)";
  // The side each test finds (+1: b ahead, -1: behind, 0: neither). Both see the same difference: the pooled
  // accuracy over seeds (each seed scores the same target tokens) is the mean of the seeds' accuracies.
  const int sentence_side = sentences.p_value >= 0.05 ? 0 : sentences.low > 0 ? +1 : sentences.high < 0 ? -1 : 0;
  const PairedTTest seeds = paired_t_test(seed_differences);
  const int seed_side = seeds.p_value >= 0.05 ? 0 : seeds.mean > 0 ? +1 : -1;
  const int side = sentence_side == seed_side ? sentence_side : 0;
  if (direction == 0) {
    const PairedTTest seeds_90 = paired_t_test(seed_differences, 0.90);
    const bool level = sentences.low_90 > -level_margin && sentences.high_90 < level_margin &&
                       seeds_90.low > -level_margin && seeds_90.high < level_margin;
    if (level) return fmt::format("holds (level within ±{})", level_margin);
    // Apart: both tests' 95 % intervals wholly beyond the margin, on one side.
    const bool ahead = sentences.low > level_margin && seeds.low > level_margin;
    const bool behind = sentences.high < -level_margin && seeds.high < -level_margin;
    if (ahead || behind) return ahead ? "does not hold (b ahead)" : "does not hold (b behind)";
    return "inconclusive";
  }
  if (side == 0) return sentence_side != 0 ? "not distinguishable over seeds" : "not distinguishable";
  return side == direction ? words.claimed_side : words.other_side;
}

std::string results_markdown(const GridReport& report) {
  std::string text = "# Results: the paper's comparison on this corpus\n\n" + report.heading + "\n\n";
  if (report.seeds > 0) {
    std::size_t finished = 0;
    for (const auto& label : report.labels) {
      const auto found = report.runs.find(label);
      if (found != report.runs.end()) finished += found->second.size();
    }
    // (rows given extra seeds for being the best can take `finished` past the plan)
    const std::size_t planned = std::max(report.labels.size() * static_cast<std::size_t>(report.seeds), finished);
    text += fmt::format("**{} of {} runs finished** ({} rows × {} seeds){}.\n\n", finished, planned,
                        report.labels.size(), report.seeds,
                        finished < planned ? "; a claim's verdict waits for all the seeds of both its rows" : "");
  }
  text += fmt::format(
      "Mean ± sample standard deviation over seeds. `a, b, c`: the fit `acc(t) = a - b·t^(-c)` of the mean "
      "validation curve from the first validation after the warmup ({} updates) to the last every seed reached, "
      "with a 95 % interval for the ceiling `a` from a block bootstrap of the fit's residuals (the fit's own "
      "uncertainty, given its form and the mean curve; not the seeds'). \"Not identified\": the curve does not "
      "pin `a` down (a free fit puts it above 100, or the exponent `c` ends at an end of its range).\n\n",
      report.warmup);
  text += "| scheme | seeds | updates | valid accuracy % | valid BLEU | valid loss | test accuracy % | test BLEU | "
          "test loss | parameters | target tokens/s | fit a [95 % interval] | fit b | fit c |\n";
  text += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& label : report.labels) {
    const auto found = report.runs.find(label);
    if (found == report.runs.end() || found->second.empty()) continue;
    const std::vector<GridRun>& runs = found->second;
    std::vector<double> steps, speed;
    for (const GridRun& run : runs)
      steps.push_back(static_cast<double>(run.steps)), speed.push_back(run.tokens_per_second);
    auto accuracy = [](const SplitMetrics& m) { return m.token_accuracy; };
    auto bleu = [](const SplitMetrics& m) { return m.bleu; };
    auto loss = [](const SplitMetrics& m) { return m.loss; };
    text += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} | {} |\n", label, runs.size(),
                        format_mean(steps, 0), format_mean(split_values(runs, "valid", accuracy), 2),
                        format_mean(split_values(runs, "valid", bleu), 2),
                        format_mean(split_values(runs, "valid", loss), 3),
                        format_mean(split_values(runs, "test", accuracy), 2),
                        format_mean(split_values(runs, "test", bleu), 2),
                        format_mean(split_values(runs, "test", loss), 3), runs.front().parameters,
                        summarize(speed).mean, fit_columns(runs, report.warmup));
  }
  text += "\n![validation token accuracy against updates, each row's mean over its seeds](curves.svg)\n";

  if (!report.length_bounds.empty()) {
    std::vector<LengthBucket> shape = length_buckets({}, report.length_bounds);
    text += "\n## Test token accuracy by source length (BPE tokens)\n\n| scheme |";
    std::string rule = "|---|";
    for (const LengthBucket& bucket : shape) {
      text += bucket.high < 0 ? fmt::format(" > {} |", bucket.low - 1)
                              : fmt::format(" {}–{} |", bucket.low, bucket.high);
      rule += "---|";
    }
    text += "\n" + rule + "\n";
    std::vector<int64_t> pairs(shape.size(), 0);
    for (const auto& label : report.labels) {
      const auto found = report.runs.find(label);
      if (found == report.runs.end() || !has_test(found->second)) continue;
      const BucketAccuracies buckets = bucket_accuracies(found->second, report.length_bounds);
      pairs = buckets.pairs;
      text += fmt::format("| {} |", label);
      for (const auto& values : buckets.per_seed) text += fmt::format(" {} |", format_mean(values, 2));
      text += "\n";
    }
    text += "| (test pairs) |";
    for (int64_t count : pairs) text += fmt::format(" {} |", count);
    text += "\n\n![test token accuracy by source length](length.svg)\n";
  }

  const std::string claims = claims_rows(report, paper_claims(), -1);
  if (!claims.empty()) {
    text += fmt::format(
        "\n## The paper's claims, on the test split\n\n"
        "Two tests of each difference b − a, one per source of luck. Over test sentences: a paired bootstrap "
        "(1,000 resamples, the same draw for both rows; sacreBLEU's paired-bs) with each row's seeds pooled per "
        "sentence, for token accuracy and BLEU on the whole split: the difference, its 95 % interval and two-sided "
        "p-value. Over seeds: a paired t-test of the seeds' own accuracy differences (seed s of b against seed s "
        "of a): their mean, its 95 % interval and p. A claim holds only when both find the accuracy difference at "
        "p < 0.05 on the claimed side (the bootstrap's interval excluding 0); a claim that two rows are level "
        "holds when both tests' 90 % intervals lie inside ±{} points (equivalence by two one-sided tests; the "
        "paper's whole table spans 0.47 points). No correction for testing several claims.\n\n"
        "| b vs a | the paper | test accuracy % b vs a | accuracy b − a [95 %], p | BLEU b − a [95 %], p | "
        "each seed's accuracy b − a | over seeds: mean [95 %], p | verdict |\n"
        "|---|---|---|---|---|---|---|---|\n",
        level_margin);
    text += claims;
  }
  const std::string beyond = report.training_max_length > 0
                                 ? claims_rows(report, extrapolation_claims(), report.training_max_length)
                                 : "";
  if (!beyond.empty()) {
    text += fmt::format(
        "\n## Beyond the training length: power law against exponential decay\n\n"
        "Training and validation pairs have at most {0} BPE tokens a side; the test split keeps longer ones. The "
        "same two tests as above, over the test sentences whose source is longer than {0} tokens only (by the "
        "source alone: a pair with a shorter source and a longer target counts as short).\n\n"
        "| b vs a | the argument | test accuracy % b vs a | accuracy b − a [95 %], p | BLEU b − a [95 %], p | "
        "each seed's accuracy b − a | over seeds: mean [95 %], p | verdict |\n|---|---|---|---|---|---|---|---|\n",
        report.training_max_length);
    text += beyond;
  }
  if (report.training_max_length > 0) {
    const std::string points = growth_rows(report, extrapolation_claims(), report.training_max_length,
                                           PairedMetric::token_accuracy);
    const std::string log_odds = growth_rows(report, extrapolation_claims(), report.training_max_length,
                                             PairedMetric::token_log_odds);
    if (!points.empty()) {
      const std::string header = fmt::format(
          "| b vs a | b − a, ≤ {0} | b − a, > {0} | change [95 %], p | each seed's change | "
          "over seeds: mean [95 %], p | verdict |\n|---|---|---|---|---|---|---|\n",
          report.training_max_length);
      text += fmt::format(
          "\n### Does the lead grow beyond the training length?\n\n"
          "A row ahead on the long sentences may only be as far ahead as it is everywhere. Here the change of the "
          "difference: (b − a on sources longer than {0} tokens) − (b − a on sources of at most {0}). Over test "
          "sentences: a stratified paired bootstrap (1,000 resamples, each redrawing the short and the long "
          "sentences at their own counts, the same draw for both rows) with the seeds pooled; over seeds: a paired "
          "t-test of each seed's own change. The lead grows (or shrinks) only when both find the change at "
          "p < 0.05. Accuracy is lower on the long sentences, so whether a lead grows depends on the scale it is "
          "measured on: in accuracy points a lead that stays a fixed fraction of the accuracy shrinks, in "
          "log-odds, log(right / wrong), a lead counts the same at any accuracy. Both are tested.\n\n"
          "In accuracy points:\n\n{1}{2}\nIn log-odds of a target token being right:\n\n{1}{3}",
          report.training_max_length, header, points, log_odds);
    }
  }
  return text;
}

namespace {

Series row_series(const std::string& label, std::size_t row) {
  return {label, {}, {}, palette_color(row), row >= 8};  // 8 colours, then the same dashed
}

}  // namespace

std::string curves_svg(const GridReport& report) {
  Panel panel{"each row's mean over its seeds, up to the last validation every seed reached", {}};
  for (std::size_t row = 0; row < report.labels.size(); ++row) {
    const auto found = report.runs.find(report.labels[row]);
    if (found == report.runs.end() || found->second.empty()) continue;
    const MeanCurve curve = mean_validation_curve(found->second);
    Series series = row_series(report.labels[row], row);
    series.x = curve.steps, series.y = curve.accuracy;
    panel.series.push_back(std::move(series));
  }
  return render_panels("Validation token accuracy during training", {panel}, 1, {"update"},
                       {"validation token accuracy %"});
}

std::string length_svg(const GridReport& report) {
  if (report.length_bounds.empty()) return "";
  Panel panel{report.training_max_length > 0
                  ? fmt::format("each row's mean over its seeds; training pairs ≤ {} tokens a side",
                                report.training_max_length)
                  : "each row's mean over its seeds",
              {}};
  for (std::size_t row = 0; row < report.labels.size(); ++row) {
    const auto found = report.runs.find(report.labels[row]);
    if (found == report.runs.end() || !has_test(found->second)) continue;
    const BucketAccuracies buckets = bucket_accuracies(found->second, report.length_bounds);
    Series series = row_series(report.labels[row], row);
    for (std::size_t b = 0; b < buckets.per_seed.size(); ++b) {
      if (buckets.per_seed[b].empty()) continue;
      series.x.push_back(buckets.mean_source_tokens[b]);
      series.y.push_back(summarize(buckets.per_seed[b]).mean);
    }
    panel.series.push_back(std::move(series));
  }
  return render_panels("Test token accuracy by source length", {panel}, 1,
                       {"source length, BPE tokens (each bucket at its pairs' mean)"}, {"test token accuracy %"});
}

}  // namespace agf::train
