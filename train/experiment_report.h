#pragma once
// results.md of a grid of runs (train/experiment.h): per scheme, mean ± sample standard deviation over seeds
// on the validation and test splits; the learning-curve fit acc(t) = a - b·t^(-c) of the mean validation
// curve after the warmup, with a ≤ 100 and an interval for a (train/curve_fit.h); for each of the paper's
// pairwise claims two tests of the difference b - a in test token accuracy, one per source of luck: a paired
// bootstrap over the test sentences with the seeds pooled (train/paired_bootstrap.h) and a paired t-test over
// the seeds' own differences (train/paired_t_test.h), and a verdict; optionally test token accuracy by
// source length, the claims about test sentences longer than training saw (power law against exponential
// decay) and whether each of those leads grows from the short sentences to the long (the change of the
// difference, by a stratified paired bootstrap and over seeds, in accuracy points and in log-odds); and two
// SVG plots.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "train/paired_bootstrap.h"

namespace agf::train {

struct SplitMetrics {
  double loss = 0, nll = 0, token_accuracy = 0, bleu = 0;
  int64_t sentences = 0;       // pairs evaluated (all translated for BLEU)
  std::string sentences_file;  // their per-sentence scores (train/sentence_scores.h)
};

// One finished run, as its record holds it.
struct GridRun {
  std::string label;
  uint64_t seed = 0;
  int64_t parameters = 0, steps = 0;
  bool stopped_early = false;
  double tokens_per_second = 0;
  std::map<std::string, SplitMetrics> splits;                   // "valid", "test": the best checkpoint's
  std::vector<double> curve_steps, curve_accuracy, curve_loss;  // the validations during training
};

struct GridReport {
  std::string heading;                               // what was run: preset, budget, data (markdown)
  std::vector<std::string> labels;                   // the rows, in the grid's order
  std::map<std::string, std::vector<GridRun>> runs;  // by label, seeds ascending
  std::vector<int64_t> length_bounds;                // test token accuracy by source length; empty = no table
  int64_t training_max_length = 0;  // the bound on the sides training saw (prepare.json); 0: unknown, no section
  int64_t warmup = 0;               // the budget's warmup updates: the learning-curve fit starts after them
  // The seeds every row is to have: a claim gets a verdict only once both its rows have them all ("pending"
  // before); 0 = judge whatever the rows have.
  int seeds = 0;
};

// A claim of the paper about two rows: b against a, on test token accuracy.
struct PaperClaim {
  std::string a, b;
  int direction = 0;  // +1: b is better; 0: the two are level
  std::string paper;  // what the paper says, with its figures
};

// The paper's claims that the grid's rows can test (SPEC §1).
std::vector<PaperClaim> paper_claims();

// The paper's argument for a power law (a heavy tail keeps far tokens in reach where an exponential has cut
// them off) as claims about the test sentences longer than any training pair: power-law rows against
// exponential ones.
std::vector<PaperClaim> extrapolation_claims();

// How far apart two rows may be and still be level: the paper's whole table (70.45 to 70.92) spans 0.47 points
// of token accuracy, so a claim that two of its rows are level means at least this close.
inline constexpr double level_margin = 0.5;

// The verdict on a claim from the pooled paired bootstrap over test sentences and from the seeds' own
// differences (b - a, same seed). A difference counts only when both tests find it at p < 0.05 (the
// bootstrap's 95 % interval excluding 0, and the paired t-test over seeds): then "holds" or "reversed" (`words`)
// against `direction`; otherwise "not distinguishable", or "not distinguishable over seeds" when only the
// bootstrap finds it. A claim that two rows are level (direction 0) is an equivalence test: "holds (level
// within ±level_margin)" when both tests' 90 % intervals lie inside ±level_margin (two one-sided tests at 5 %
// each), "does not hold (b ahead|behind)" when both tests' 95 % intervals lie wholly beyond the margin on one
// side, "inconclusive" otherwise. With fewer than two seeds there is no test over seeds, and the verdict says
// so.
// The words for a difference found on the claimed side and on the other ("holds" / "reversed"; for whether a
// lead grows beyond the training length, "grows" / "shrinks").
struct VerdictWords {
  std::string claimed_side = "holds", other_side = "reversed";
};
std::string claim_verdict(int direction, const PairedComparison& sentences, const std::vector<double>& seed_differences,
                          const VerdictWords& words = {});

// results.md; it links the two plots below, written beside it.
std::string results_markdown(const GridReport& report);

// Validation token accuracy against updates, each row's mean over its seeds (train/svg_plot.h).
std::string curves_svg(const GridReport& report);

// Test token accuracy by source-length bucket, each row's mean over its seeds, at the bucket's mean source
// length; "" without length bounds.
std::string length_svg(const GridReport& report);

}  // namespace agf::train
