// agf experiment paper: the paper's grid of runs and its summary table (train/experiment.h).
#include <fmt/core.h>
#include <omp.h>

#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "tools/agf/lr_schedule_flag.h"
#include "tools/agf/model_flags.h"
#include "train/decode.h"
#include "train/device_flag.h"
#include "train/experiment.h"

namespace {

struct ExperimentFlags {
  agf::cli::ModelFlags model;
  agf::train::ExperimentOptions options;
  int threads = 0;
  std::string device = "cpu", precision = "fp32";
  agf::cli::LrScheduleFlag lr_schedule;
};

const agf::cli::Registration registration{
    "experiment", "Run a grid of trainings and summarise it", [](CLI::App& command) {
      command.require_subcommand(1);
      auto* paper = command.add_subcommand("paper", "The paper's comparison: every scheme, same data, budget and seed");
      auto flags = std::make_shared<ExperimentFlags>();
      auto& o = flags->options.base;
      paper->add_option("--data", o.data_dir, "Prepared dataset folder")->required()->check(CLI::ExistingDirectory);
      paper->add_option("--out", o.out_dir, "Work folder: runs/LABEL/seedN with checkpoints and raw metrics")
          ->required();
      paper->add_option("--results", flags->options.results_dir,
                        "Where each finished run's record (summary.json, metrics.jsonl.xz, per-sentence scores) and "
                        "results.md go, to commit (default: the work folder)");
      paper->add_option("--beam", flags->options.beam, "Beam width of each split's translations for BLEU")
          ->capture_default_str()
          ->check(agf::cli::number_between(1, agf::train::max_beam));
      paper
          ->add_option("--length-buckets", flags->options.length_bounds,
                       "results.md: test token accuracy by source length, these upper bounds (e.g. 40,60)")
          ->delimiter(',')
          ->check(agf::cli::non_negative_number());
      paper->add_option("--preset", flags->model.preset, "Model size")->capture_default_str();
      paper->add_flag("--pre-norm", flags->model.pre_norm, "Pre-norm residual blocks");
      paper->add_option("--max-steps", o.max_steps, "Updates per run")->required()->check(agf::cli::positive_number());
      paper->add_option("--max-tokens", o.max_tokens, "Padded token slots per batch")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      paper->add_option("--update-freq", o.update_freq, "Batches accumulated per update")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      paper->add_option("--lr", o.lr, "Peak learning rate")->capture_default_str()->check(agf::cli::positive_number());
      paper->add_option("--warmup", o.warmup, "Warmup steps")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      flags->lr_schedule.add_to(*paper);
      paper
          ->add_option("--valid-every", o.valid_every, "Validation interval (at least 3 points are needed for the fit)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      paper
          ->add_option("--patience", o.patience,
                       "Stop each run after N validations in a row without a lower validation loss (0: off)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      paper->add_option("--bleu-sentences", o.bleu_sentences, "Validation sentences translated for BLEU")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      paper->add_option("--seed", o.seed, "First seed")->capture_default_str();
      paper->add_option("--seeds", flags->options.seeds, "Seeds of every scheme")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      paper->add_option("--best-seeds", flags->options.best_seeds, "Seeds in all of the --best-count best schemes")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      paper
          ->add_option("--best-count", flags->options.best_count,
                       "How many of the best schemes by validation accuracy get --best-seeds (0: none; winners "
                       "given more seeds are a biased sample)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      paper->add_option("--schemes", flags->options.schemes,
                        "Scheme labels instead of the paper's grid (e.g. vanilla agf-m+pcmv)");
      paper->add_option("--threads", flags->threads, "CPU threads (default: all)")
          ->check(agf::cli::non_negative_number());
      paper->add_option("--device", flags->device, "Where every run trains: cpu, cuda or cuda:N")
          ->capture_default_str();
      paper
          ->add_option("--precision", flags->precision,
                       "fp32; fp16/bf16 with f32 master weights (--device "
                       "cuda); bf16 on a CPU with AVX512-BF16 (docs/mixed-precision.md)")
          ->capture_default_str();
      paper->callback([flags] {
        if (flags->threads > 0) omp_set_num_threads(flags->threads);
        flags->options.base.device = agf::train::parse_device(flags->device);
        flags->options.base.precision = agf::train::parse_precision(flags->precision);
        flags->options.base.lr_schedule = flags->lr_schedule.resolve(flags->options.base.warmup,
                                                                     flags->options.base.max_steps);
        flags->options.base.model = flags->model.config(1);
        flags->options.base.quiet = false;
        fmt::print("{}", agf::train::run_experiment(flags->options));
      });
    }};

}  // namespace
