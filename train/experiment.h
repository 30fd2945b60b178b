#pragma once
// The paper's comparison as one resumable command: every scheme trained with the same data, budget and
// seeds, each run's best checkpoint evaluated on the validation and test splits (token accuracy, loss, BLEU of
// beam-search translations of the whole split, per-sentence scores), and a results.md with the table, the
// learning-curve fits and the paired tests of the paper's claims (train/experiment_report.h).
//
// Each run has a work folder, OUT/runs/LABEL/seedN (checkpoints, the raw metrics.jsonl), and a record: the
// small files that say what it gave, written when it finishes, in RESULTS/LABEL/seedN (or the work folder
// when no results folder is given):
//   summary.json                 the budget it ran under, what it reached, each split's metrics, the machine
//   metrics.jsonl.xz             every training and validation record (the curves)
//   SPLIT.sentences.jsonl.xz     per-sentence scores and translations of each evaluated split
//                                (train/sentence_scores.h)
// A run with a record is never trained again: it is read back when its budget equals the grid's, and is an
// error otherwise (never a silent mix of budgets). So a results folder under version control keeps every
// finished run, even when the work folder is gone.
#include <cstdint>
#include <string>
#include <vector>

#include "train/experiment_report.h"
#include "train/trainer.h"

namespace agf::train {

struct ExperimentOptions {
  TrainOptions base;                 // data, budget and optimisation shared by every run (out_dir = work folder)
  std::vector<std::string> schemes;  // labels such as "agf-m+pcmv+abs-pe"; empty = the paper's grid
  int seeds = 1;                     // seeds of every scheme
  // Extra seeds (up to `best_seeds` in all) for the `best_count` best schemes by mean validation accuracy, after
  // every scheme has `seeds`. Off by default: rows that get more seeds for having won are a biased sample.
  int best_seeds = 2;
  int best_count = 0;
  std::string results_dir;             // the runs' records and results.md; "" = the work folder
  int beam = 4;                        // beam width of the translations each split's BLEU scores
  std::vector<int64_t> length_bounds;  // results.md: test token accuracy by source length, these upper bounds
};

// The paper's grid: vanilla, agf-b, agf-b+pcmv, agf-m+pcmv, agf-f+pcmv, alibi, alibi-mult+pcmv, rope, t5,
// kerple-log, agf-m+pcmv+abs-pe.
std::vector<std::string> paper_grid();

// The `count` rows of `report` with the highest mean validation token accuracy, best first (ties keep the
// grid's order): the schemes that get --best-seeds. Never the test split's accuracy: choosing on it would leak
// the test set into what is then tested on it.
std::vector<std::string> best_schemes(const GridReport& report, int count);

// Applies a label ("agf-m+pcmv+abs-pe", "vanilla" = sinusoidal) to a model config.
void apply_scheme_label(const std::string& label, nn::TransformerConfig& config);

// Runs (or resumes) every run that has no record, then writes RESULTS/results.md; returns its text.
std::string run_experiment(const ExperimentOptions& options);

}  // namespace agf::train
