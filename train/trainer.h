#pragma once
// The training loop (SPEC §6): label-smoothed cross-entropy, Adam with inverse-square-root warmup,
// global-norm clipping, token-budget batches, gradient accumulation, periodic validation (loss,
// perplexity, token accuracy, BLEU), atomic checkpoints (last N and the best; also every --save-every steps
// or minutes, without validating), exact resumption, and a metrics.jsonl with one JSON object per step and
// per validation. A kill at any instant loses at most the steps since the last checkpoint
// (docs/crash-safety.md). On the CPU or a CUDA device, in f32 or mixed precision (f16/bf16 compute, f32
// master weights, loss scaling: train/mixed_precision.h; on the CPU, bf16 only: bf16 operands in every
// matrix product, the rest f32). In one process, or data-parallel in the N processes of
// `mpirun -np N agf train` (train/distributed.h, docs/distributed.md): each computes its shard of every
// global batch, the gradients are summed, every process takes the same update, and rank 0 alone validates
// and writes the run folder.
#include <cstdint>
#include <functional>
#include <string>

#include "core/device.h"
#include "nn/transformer_config.h"
#include "train/lr_schedule.h"
#include "train/mixed_precision.h"

namespace agf::train {

struct TrainOptions {
  std::string data_dir;         // from `agf corpus prepare`: bpe.json, train.bin, valid.bin
  std::string out_dir;          // RUN: metrics.jsonl, checkpoints/, config.json
  nn::TransformerConfig model;  // preset + scheme flags (vocabulary size is taken from the data)
  int64_t max_steps = 1000;     // optimizer updates in the whole run (a resumed run counts earlier ones)
  double max_minutes = 0;       // stop (with a checkpoint) after this much training time; 0 = no limit
  uint64_t max_tokens = 4096;   // padded token slots per batch
  int64_t update_freq = 1;      // batches accumulated per update
  double lr = 7e-4;             // peak learning rate
  int64_t warmup = 4000;        // steps of linear warmup
  LrSchedule lr_schedule = LrSchedule::inverse_sqrt;  // after the warmup (train/lr_schedule.h)
  double clip_norm = 0;                               // global gradient-norm clip; 0 = off
  double label_smoothing = 0.1;
  int64_t valid_every = 500;  // validate (and checkpoint) every N steps and at the end
  // Early stopping: end the run after this many validations in a row without a validation loss below the
  // lowest so far (0 = off). Counted in the checkpoints, so a resumed run stops where the whole one would.
  int64_t patience = 0;
  // Checkpoints without validation, so that a crash between validations loses little: every N steps
  // (0 = off), and once this many minutes have passed since the last checkpoint (0 = off).
  int64_t save_every = 0;
  double save_every_minutes = 5;
  int64_t bleu_sentences = 100;           // validation sentences translated for BLEU; 0 = none
  int64_t keep_last = 3;                  // step checkpoints kept (best.safetensors is kept besides)
  int64_t log_every = 10;                 // plain progress lines when stderr is not a terminal
  uint64_t seed = 1;                      // parameters, data order and dropout
  Device device = Device::cpu();          // where the model, the batches and every step's tensors live
  Precision precision = Precision::fp32;  // fp16/bf16: half-precision compute, f32 masters; bf16 on the CPU:
                                          // bf16 products, f32 tensors (train/mixed_precision.h)
  bool resume = false;                    // continue from RUN/checkpoints' latest step checkpoint
  // Resume a checkpoint written by another number of processes (docs/distributed.md): the same global batches
  // in the same order, new dropout streams. Without it such a resume is refused.
  bool reshard = false;
  bool quiet = false;  // no progress output
  // Called with each checkpoint file's path once it is in place (tests stop the run here, as a kill would).
  std::function<void(const std::string& path)> checkpoint_written;
};

struct TrainSummary {
  int64_t steps = 0;
  int64_t parameters = 0;
  double last_loss = 0;
  double valid_loss = 0, token_accuracy = 0, bleu = 0;
  double target_tokens_per_second = 0;    // of the whole world
  double allreduce_seconds_per_step = 0;  // a distributed run: the mean time of the gradient sum's collectives
  int64_t skipped_steps = 0;  // steps skipped for non-finite gradients (the whole run, resumed parts included)
  double loss_scale = 1;      // the loss scale at the end
  std::string last_checkpoint;
  bool interrupted = false;    // stopped by SIGINT/SIGTERM or the time limit (a checkpoint was written)
  bool stopped_early = false;  // ended by `patience` before max_steps
  double best_valid_loss = 0;  // the lowest validation loss of the run (resumed parts included)
};

TrainSummary train(const TrainOptions& options);

// The newest step checkpoint in RUN/checkpoints ("" when there is none).
std::string latest_checkpoint(const std::string& out_dir);

}  // namespace agf::train
