#pragma once
// The paper's comparison as one resumable command: every scheme trained with the same data, budget and
// seed, extra seeds for the best, a power-law fit acc(t) = a - b·t^(-c) of each validation curve, and a
// results.md in the shape of the paper's table.
#include <string>
#include <vector>

#include "train/trainer.h"

namespace agf::train {

struct ExperimentOptions {
  TrainOptions base;                 // data, budget and optimisation shared by every run (out_dir = grid folder)
  std::vector<std::string> schemes;  // labels such as "agf-m+pcmv+abs-pe"; empty = the paper's grid
  int seeds = 1;                     // seeds of every scheme
  int best_seeds = 2;                // seeds of the `best_count` best schemes (by mean accuracy)
  int best_count = 3;
};

// The paper's grid: vanilla, agf-b, agf-b+pcmv, agf-m+pcmv, agf-f+pcmv, alibi, alibi-mult+pcmv, rope, t5,
// kerple-log, agf-m+pcmv+abs-pe.
std::vector<std::string> paper_grid();

// Applies a label ("agf-m+pcmv+abs-pe", "vanilla" = sinusoidal) to a model config.
void apply_scheme_label(const std::string& label, nn::TransformerConfig& config);

// Runs (or resumes) every run that is not finished, then writes OUT/results.md; returns its text.
std::string run_experiment(const ExperimentOptions& options);

}  // namespace agf::train
