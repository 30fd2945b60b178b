// agf train: train a model on a prepared dataset (train/trainer.h).
#include <fmt/core.h>
#include <omp.h>

#include "core/device.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "tools/agf/lr_schedule_flag.h"
#include "tools/agf/model_flags.h"
#include "train/device_flag.h"
#include "train/distributed.h"
#include "train/trainer.h"

namespace {

struct TrainFlags {
  agf::cli::ModelFlags model;
  agf::train::TrainOptions options;
  int threads = 0;
  std::string device = "cpu", precision = "fp32";
  agf::cli::LrScheduleFlag lr_schedule;
};

const agf::cli::Registration registration{
    "train", "Train a translation model (writes RUN/metrics.jsonl and RUN/checkpoints/)", [](CLI::App& command) {
      auto flags = std::make_shared<TrainFlags>();
      auto& o = flags->options;
      command.add_option("--data", o.data_dir, "Prepared dataset folder (agf corpus prepare --out)")
          ->required()
          ->check(CLI::ExistingDirectory);
      command.add_option("--out", o.out_dir, "Run folder")->required();
      flags->model.add_to(command);
      command.add_option("--max-steps", o.max_steps, "Optimizer updates in the whole run (counting resumed ones)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command
          .add_option("--max-minutes", o.max_minutes,
                      "Stop after this much training time, with a checkpoint (0: no limit)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      command.add_option("--max-tokens", o.max_tokens, "Padded token slots per batch")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--update-freq", o.update_freq, "Batches accumulated per update")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--lr", o.lr, "Peak learning rate")->capture_default_str()->check(agf::cli::positive_number());
      command.add_option("--warmup", o.warmup, "Warmup steps of the learning-rate schedule")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      flags->lr_schedule.add_to(command);
      command.add_option("--clip-norm", o.clip_norm, "Clip the global gradient norm (0: off)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      command.add_option("--label-smoothing", o.label_smoothing, "ε of the label-smoothed loss")
          ->capture_default_str()
          ->check(agf::cli::number_between(0.0, 1.0));
      command.add_option("--valid-every", o.valid_every, "Validate and checkpoint every N steps")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command
          .add_option("--patience", o.patience,
                      "Stop after N validations in a row without a lower validation loss (0: off)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      command.add_option("--save-every", o.save_every, "Also checkpoint every N steps, without validating (0: off)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      command
          .add_option("--save-every-minutes", o.save_every_minutes,
                      "Also checkpoint, without validating, once this many "
                      "minutes have passed since the last checkpoint (0: off)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      command.add_option("--bleu-sentences", o.bleu_sentences, "Validation sentences translated for BLEU (0: none)")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      command.add_option("--keep-last", o.keep_last, "Step checkpoints to keep (best.safetensors is kept besides)")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--log-every", o.log_every, "Progress line every N steps when stderr is not a terminal")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      command.add_option("--seed", o.seed, "Seed of parameters, data order and dropout")->capture_default_str();
      command.add_flag("--resume", o.resume, "Continue the run in --out from its newest checkpoint");
      command.add_flag("--reshard", o.reshard,
                       "With --resume: continue a run written by another number of processes (the "
                       "same batches in the same order, new dropout streams; docs/distributed.md)");
      command.add_flag("--quiet", o.quiet, "No progress output");
      command.add_option("--threads", flags->threads, "CPU threads (default: all)")
          ->check(agf::cli::non_negative_number());
      command.add_option("--device", flags->device, "Where to train: cpu, cuda or cuda:N")->capture_default_str();
      command
          .add_option("--precision", flags->precision,
                      "fp32; fp16 or bf16 compute with f32 master weights (--device cuda); bf16 on the CPU: bf16 "
                      "matrix products, needs AVX512-BF16 (docs/mixed-precision.md)")
          ->capture_default_str();
      command.footer(
          "Checkpoints are written at each validation, every --save-every steps, once --save-every-minutes have\n"
          "passed since the last one, at the end, and on SIGINT or SIGTERM. Each goes to a .tmp file, is fsynced\n"
          "and renamed into place: whatever stops the run (SIGKILL, a power cut, a full disk), even mid-write,\n"
          "the checkpoints on disk are complete, and --resume continues from the newest exactly as the\n"
          "uninterrupted run would have, losing only the steps since it. metrics.jsonl holds whole lines only,\n"
          "each step once. docs/crash-safety.md\n\n"
          "Data-parallel on several processes: mpirun -np N agf train ... (each process computes its share of\n"
          "every batch, the gradients are summed with MPI, rank 0 writes the run folder; under mpirun, stop\n"
          "with a checkpoint by kill -USR1 <mpirun's pid>). --device cuda gives each process of a machine its\n"
          "own GPU. docs/distributed.md");
      command.callback([flags] {
        if (flags->threads > 0) omp_set_num_threads(flags->threads);
        agf::train::World& processes = agf::train::world();
        // Several processes on one machine take one GPU each, by their rank on it, when no index is given.
        const bool one_gpu_each = flags->device == "cuda" && processes.local_size() > 1 && agf::cuda_device_count() > 0;
        flags->options.device = agf::train::parse_device(
            one_gpu_each ? fmt::format("cuda:{}", processes.local_rank() % agf::cuda_device_count()) : flags->device);
        flags->options.precision = agf::train::parse_precision(flags->precision);
        flags->options.lr_schedule = flags->lr_schedule.resolve(flags->options.warmup, flags->options.max_steps);
        flags->options.model = flags->model.config(1);  // the vocabulary size comes from the data
        const auto summary = agf::train::train(flags->options);
        if (!processes.is_root()) return;  // rank 0 reports for the world
        fmt::print(
            "steps {}  loss {:.4f}  valid loss {:.4f}  token accuracy {:.2f}%  BLEU {:.2f}  {:.0f} target tokens/s\n",
            summary.steps, summary.last_loss, summary.valid_loss, summary.token_accuracy, summary.bleu,
            summary.target_tokens_per_second);
        if (summary.skipped_steps > 0) {
          fmt::print("skipped steps {} (non-finite gradients)  loss scale {}\n", summary.skipped_steps,
                     summary.loss_scale);
        }
        if (summary.stopped_early) {
          fmt::print("stopped early (--patience {}): lowest valid loss {:.4f}\n", flags->options.patience,
                     summary.best_valid_loss);
        }
        if (!summary.last_checkpoint.empty()) fmt::print("checkpoint {}\n", summary.last_checkpoint);
        if (processes.size() > 1) {
          fmt::print("processes {}  gradient allreduce {:.1f} ms per step\n", processes.size(),
                     summary.allreduce_seconds_per_step * 1e3);
        }
      });
    }};

}  // namespace
