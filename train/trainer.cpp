#include "train/trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <span>

#include "autograd/functions.h"
#include "core/number_text.h"
#include "data/batch_sampler.h"
#include "data/batch_shard.h"
#include "data/bpe_codec.h"
#include "data/bpe_model.h"
#include "data/token_dataset.h"
#include "nn/transformer.h"
#include "train/adam.h"
#include "train/batch.h"
#include "train/checkpoint.h"
#include "train/device_flag.h"
#include "train/distributed.h"
#include "train/evaluate.h"
#include "train/gradient_sum.h"
#include "train/lr_schedule.h"
#include "train/metrics_log.h"
#include "train/mixed_precision.h"
#include "train/sequence_loss.h"
#include "train/stop_on_signal.h"

namespace fs = std::filesystem;

namespace agf::train {

namespace {

std::string step_checkpoint_name(int64_t step) { return fmt::format("step_{:08d}.safetensors", step); }

std::vector<std::pair<int64_t, fs::path>> step_checkpoints(const fs::path& folder) {
  std::vector<std::pair<int64_t, fs::path>> found;
  static const std::regex pattern(R"(step_(\d+)\.safetensors)");
  if (!fs::is_directory(folder)) return found;
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, match, pattern)) continue;
    if (const auto step = parse_number<int64_t>(match[1].str())) found.emplace_back(*step, entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Files that save_safetensors leaves when a write is killed midway ("<name>.tmp"): never read, so removed.
void remove_partial_writes(const fs::path& folder) {
  if (!fs::is_directory(folder)) return;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".tmp") fs::remove(entry.path());
  }
}

// Rank r's dropout stream: its own Philox key, so that the processes of a distributed run draw independent
// masks; rank 0's is the run's seed, so a single process draws what it always did.
uint64_t dropout_stream_seed(uint64_t seed, int rank) {
  return seed ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(rank));
}

// Where this process's dropout stream continues: the offset the checkpoint holds for its rank, or, resumed by
// another number of processes (--reshard), past every offset any stream of the old run reached, so that no
// rank redraws masks already used.
uint64_t resumed_dropout_offset(const TrainingState& saved, int rank, int world_size) {
  if (saved.world_size == world_size) return world_size == 1 ? saved.dropout_offset : saved.dropout_offsets.at(rank);
  uint64_t offset = saved.dropout_offset;
  for (uint64_t other : saved.dropout_offsets) offset = std::max(offset, other);
  return offset;
}

// A fingerprint of the weights' bytes, to check that the processes of a distributed run still hold one model.
uint64_t weights_fingerprint(const std::vector<std::pair<std::string, Variable>>& parameters) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const auto& [name, parameter] : parameters) {
    const Tensor values = parameter.data().to(Device::cpu()).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(values.raw_data());
    const std::size_t size = static_cast<std::size_t>(values.numel()) * dtype_size(values.dtype());
    // 8 bytes at a time (FNV-1a's step on words): fast enough for a model at every checkpoint.
    std::size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      hash = (hash ^ word) * 0x100000001b3ULL;
    }
    for (; i < size; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
  }
  return hash;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  AGF_CHECK(in.good(), "{}: cannot open", path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string format_duration(double seconds) {
  const auto total = static_cast<int64_t>(seconds);
  return total >= 3600 ? fmt::format("{}:{:02d}:{:02d}", total / 3600, total / 60 % 60, total % 60)
                       : fmt::format("{}:{:02d}", total / 60, total % 60);
}

}  // namespace

std::string latest_checkpoint(const std::string& out_dir) {
  const auto found = step_checkpoints(fs::path(out_dir) / "checkpoints");
  return found.empty() ? "" : found.back().second.string();
}

TrainSummary train(const TrainOptions& options) {
  AGF_CHECK(options.max_steps >= 1, "train: --max-steps must be at least 1, got {}", options.max_steps);
  AGF_CHECK(options.update_freq >= 1, "train: --update-freq must be at least 1, got {}", options.update_freq);
  AGF_CHECK(options.valid_every >= 1, "train: --valid-every must be at least 1, got {}", options.valid_every);
  AGF_CHECK(options.patience >= 0, "train: --patience must be 0 (off) or more, got {}", options.patience);
  const std::string schedule_problem = lr_schedule_problem(options.lr_schedule, options.warmup, options.max_steps);
  AGF_CHECK(schedule_problem.empty(), "train: {}", schedule_problem);
  AGF_CHECK(options.save_every >= 0, "train: --save-every must be 0 (off) or more, got {}", options.save_every);
  AGF_CHECK(options.save_every_minutes >= 0 && std::isfinite(options.save_every_minutes),
            "train: --save-every-minutes must be 0 (off) or more, got {}", options.save_every_minutes);
  check_device_usable(options.device);
  World& processes = world();
  const bool root = processes.is_root(), distributed = processes.size() > 1;
  check_precision_usable(options.precision, options.device, "train");
  // bf16 on the CPU: every f32 matrix product of this run (training and validation) reads bf16 operands.
  const ops::cpu::ScopedMatmulPrecision products(cpu_matmul_precision(options.precision, options.device));
  const fs::path data_dir(options.data_dir), run_dir(options.out_dir), checkpoint_dir = run_dir / "checkpoints";
  for (const char* file : {"bpe.json", "train.bin", "valid.bin"}) {
    AGF_CHECK(fs::exists(data_dir / file), "train: {} is missing in --data {} (make it with `agf corpus prepare`)",
              file, options.data_dir);
  }
  const data::BpeModel bpe = data::BpeModel::load((data_dir / "bpe.json").string());
  const data::BpeCodec codec(bpe);
  const data::TokenDataset train_set = data::TokenDataset::open((data_dir / "train.bin").string(), bpe.hash());
  const data::TokenDataset valid_set = data::TokenDataset::open((data_dir / "valid.bin").string(), bpe.hash());
  for (const data::TokenDataset* split : {&train_set, &valid_set}) {
    AGF_CHECK(split->size() > 0, "train: {} holds no pairs", split->path());
  }

  // ---- a fresh run or a resumed one ----
  // Only rank 0 looks at the run folder (which may be on its machine alone); it sends what it found.
  std::string resume_from;
  if (root) {
    resume_from = latest_checkpoint(options.out_dir);
    AGF_CHECK(options.resume || resume_from.empty(),
              "train: {} already holds checkpoints; pass --resume to continue that run, or choose another --out",
              options.out_dir);
    // --resume of a folder that holds no run is refused: a mistyped --out would otherwise start a new run
    // unnoticed. A run stopped before its first checkpoint has its folder but nothing to continue from.
    AGF_CHECK(!options.resume || !resume_from.empty() || fs::is_directory(checkpoint_dir),
              "train: --resume: {} holds no run to continue (no {}); leave out --resume to start one", options.out_dir,
              checkpoint_dir.string());
    if (options.resume && resume_from.empty()) {
      fmt::print(stderr,
                 "note: {} holds no checkpoint yet (the run stopped before its first one): starting it from "
                 "step 0\n",
                 checkpoint_dir.string());
    }
    fs::create_directories(checkpoint_dir);
    remove_partial_writes(checkpoint_dir);
  }
  processes.broadcast(resume_from);
  const fs::path best_path = checkpoint_dir / "best.safetensors";
  nn::TransformerConfig config = options.model;
  config.vocabulary_size = static_cast<int64_t>(bpe.vocab_size());
  std::optional<Checkpoint> checkpoint;
  if (!resume_from.empty()) {
    // In a distributed run rank 0 reads the file and sends its bytes, checked, to the others.
    std::string bytes;
    if (root) try {
        if (distributed) bytes = read_whole_file(resume_from);
        checkpoint = distributed ? load_checkpoint_bytes(bytes, resume_from) : load_checkpoint(resume_from);
      } catch (const Error& error) {
        // Every checkpoint is written whole and renamed into place, so this is damage from outside agf (a
        // disk error, a copy cut short): say how to go back to the one before.
        const auto found = step_checkpoints(checkpoint_dir);
        fail("{}\n(the newest checkpoint of {} cannot be read; {})", error.what(), options.out_dir,
             found.size() > 1 ? fmt::format("move it away to resume from {}", found[found.size() - 2].second.string())
                              : std::string("there is no earlier one"));
      }
    if (distributed) {
      processes.broadcast(bytes);
      if (!root) checkpoint = load_checkpoint_bytes(bytes, resume_from);
    }
    AGF_CHECK(checkpoint->state.has_value(), "{}: not a training checkpoint (no agf.state.*)", resume_from);
    if (root && (options.model.scheme_label() != checkpoint->config.scheme_label() ||
                 options.model.preset != checkpoint->config.preset)) {
      fmt::print(stderr, "note: resuming {} {} from its checkpoint; the model flags given ({} {}) are ignored\n",
                 checkpoint->config.preset, checkpoint->config.scheme_label(), options.model.preset,
                 options.model.scheme_label());
    }
    check_weights_present(*checkpoint, resume_from);
    config = checkpoint->config;
    AGF_CHECK(config.vocabulary_size == static_cast<int64_t>(bpe.vocab_size()),
              "{}: the model has {} tokens but {} has {}", resume_from, config.vocabulary_size,
              (data_dir / "bpe.json").string(), bpe.vocab_size());
    // The same size is not the same tokenizer: token ids would change meaning under the trained embeddings.
    if (!checkpoint->bpe_json.empty()) {
      const data::BpeModel trained_with = data::BpeModel::from_json(checkpoint->bpe_json, resume_from + " (agf.bpe)");
      AGF_CHECK(trained_with.hash() == bpe.hash(),
                "{}: the run was trained with another BPE model than {} (hash "
                "{:016x}, not {:016x}); resume it with the --data it was trained on",
                resume_from, (data_dir / "bpe.json").string(), trained_with.hash(), bpe.hash());
    }
  }
  // The model is made (or loaded) in f32 on the CPU, then moved to the device; the optimizer keeps f32
  // masters of it and, under fp16/bf16 on a GPU, turns the model's parameters into half-precision compute
  // copies (bf16 on the CPU keeps them f32: only the products' operands are rounded).
  nn::Transformer model(config, options.seed);
  model.train();
  TrainingState state;
  state.dropout_seed = options.seed ^ 0x5eed'd209'0a7fULL;
  data::BatchSampler sampler = data::BatchSampler::for_dataset(train_set, {.max_tokens = options.max_tokens,
                                                                           .seed = options.seed});
  bool best_lost = false;  // the checkpoint records a best accuracy but best.safetensors is gone
  if (checkpoint) {
    load_parameters(model, *checkpoint, resume_from);
    state = *checkpoint->state;
    // The global batches do not depend on the number of processes, but each one's shard and dropout stream do.
    if (state.world_size != processes.size()) {
      auto processes_text = [](int64_t count) {
        return count == 1 ? std::string("a single process") : fmt::format("{} processes (mpirun -np {})", count, count);
      };
      AGF_CHECK(options.reshard,
                "train: {} was written by a run of {} and this is {}: every batch would be split "
                "differently and the dropout masks would differ, so the run would not continue as it began. Resume "
                "it with {}, or pass --reshard to continue anyway (the same batches in the same order, new dropout "
                "streams; docs/distributed.md)",
                resume_from, processes_text(state.world_size), processes_text(processes.size()),
                processes_text(state.world_size));
      if (root) {
        fmt::print(stderr,
                   "note: --reshard: {} continues with {} instead of {}: the same batches in the same order, "
                   "new dropout streams\n",
                   resume_from, processes_text(processes.size()), processes_text(state.world_size));
      }
    }
    sampler.seek({state.epoch, state.batch});
    // best.safetensors is written before the step checkpoint that records its accuracy, so this happens
    // only to runs of older versions (killed between the two writes) or to a deleted file. The weights
    // that scored the recorded best may be gone: forget that score, so that the next validation writes
    // best.safetensors again (the best of the run from here on).
    best_lost = root && state.best_valid_accuracy >= 0 && !fs::exists(best_path);
    if (distributed) {  // every process takes part in the validation that writes it again
      double lost = best_lost ? 1 : 0;
      processes.sum(std::span(&lost, 1));
      best_lost = lost > 0;
    }
    if (best_lost && root) {
      fmt::print(stderr,
                 "note: {} is missing although {} records a best token accuracy of {:.2f}%; the next "
                 "validation writes it again\n",
                 best_path.string(), resume_from, state.best_valid_accuracy);
    }
    if (best_lost) state.best_valid_accuracy = -1;
  }
  model.to(options.device);
  MixedPrecisionOptimizer optimizer(model.named_parameters(),
                                    mixed_precision_options(options.precision, options.device));
  const std::string precision = std::string(precision_name(options.precision));
  if (checkpoint) {
    // Checkpoints from before mixed precision have no scaler state: a fresh scaler, nothing skipped.
    LossScalerState scaler = state.loss_scaler.value_or(optimizer.scaler().state());
    if (state.precision != precision) {
      fmt::print(stderr, "note: {} was trained with --precision {}; continuing in {} with a fresh loss scale\n",
                 resume_from, state.precision, precision);
      scaler = {.scale = optimizer.scaler().scale(), .good_steps = 0, .skipped_steps = scaler.skipped_steps};
    }
    optimizer.load_state(optimizer_state(*checkpoint), state.step, scaler);
  }
  state.precision = precision;
  nn::DropoutStream dropout(dropout_stream_seed(state.dropout_seed, processes.rank()));
  if (checkpoint) dropout.generator().set_offset(resumed_dropout_offset(state, processes.rank(), processes.size()));
  state.world_size = processes.size();
  // Rank 0 alone writes the run folder: metrics, checkpoints, progress.
  std::optional<MetricsLog> metrics;
  if (root) metrics.emplace((run_dir / "metrics.jsonl").string(), checkpoint ? state.step : -1);
  const std::vector<std::pair<std::string, Variable>> parameters = model.named_parameters();

  const bool quiet = options.quiet || !root;
  const bool terminal = ::isatty(STDERR_FILENO) && !quiet;
  auto say = [&](const std::string& line) {
    if (!quiet) fmt::print(stderr, "{}{}\n", terminal ? "\r\033[K" : "", line);
  };
  const std::string placement = (options.device.is_cpu() && options.precision == Precision::fp32
                                     ? ""
                                     : fmt::format(" on {} in {}", options.device.name(), precision)) +
                                (distributed ? fmt::format(" in {} processes", processes.size()) : "");
  say(checkpoint
          ? fmt::format("resuming {} at step {} ({}){}", options.out_dir, state.step, resume_from, placement)
          : fmt::format("training {} {} ({} parameters) on {} pairs, {} steps{}", config.preset, config.scheme_label(),
                        model.parameter_count(), train_set.size(), options.max_steps, placement));

  // ---- checkpoints and validation ----
  const std::string bpe_json = bpe.to_json();
  auto last_checkpoint_time = std::chrono::steady_clock::now();  // for --save-every-minutes
  TrainSummary summary;
  summary.parameters = model.parameter_count();
  summary.skipped_steps = optimizer.scaler().skipped_steps();
  summary.loss_scale = optimizer.loss_scale();
  auto write_checkpoint = [&](const std::string& path) {
    state.epoch = sampler.position().epoch;
    state.batch = sampler.position().batch;
    state.dropout_offset = dropout.generator().offset();
    state.loss_scaler = optimizer.scaler().state();
    try {
      // The metrics lines up to this step reach the disk before the checkpoint that covers them.
      metrics->sync();
      // f32 master weights and moments, on the CPU, whatever the device and precision of the run.
      save_checkpoint(path, optimizer.master_parameters(), config, bpe_json, &optimizer.adam(), &state);
    } catch (const Error& error) {
      const std::string latest = latest_checkpoint(options.out_dir);
      fail("train: the checkpoint of step {} was not written: {}\n{}", state.step, error.what(),
           latest.empty() ? std::string("(the run has no checkpoint yet)")
                          : fmt::format("(the newest complete checkpoint is {}; once there is room, continue from it "
                                        "with --resume)",
                                        latest));
    }
    last_checkpoint_time = std::chrono::steady_clock::now();
    if (options.checkpoint_written) options.checkpoint_written(path);
  };
  auto save_step_checkpoint = [&] {
    const fs::path path = checkpoint_dir / step_checkpoint_name(state.step);
    write_checkpoint(path.string());
    summary.last_checkpoint = path.string();
    auto existing = step_checkpoints(checkpoint_dir);
    for (std::size_t i = 0; i + static_cast<std::size_t>(std::max<int64_t>(options.keep_last, 1)) < existing.size();
         ++i) {
      fs::remove(existing[i].second);
    }
  };
  // What a validation is: `scheduled` (every --valid-every steps and at --max-steps: logged, and counted by
  // early stopping), `extra` (when --max-minutes runs out between scheduled ones: logged, not counted, so that
  // a resumed run stops where an uninterrupted one would), `repeat` (a finished run's last validation again,
  // to write a lost best.safetensors: already in metrics.jsonl and already counted).
  enum class Validation { scheduled, extra, repeat };
  auto validate = [&](Validation kind) {
    const bool log = kind != Validation::repeat;
    const EvaluationResult result = evaluate(model, valid_set, codec,
                                             {.max_tokens = options.max_tokens,
                                              .label_smoothing = options.label_smoothing,
                                              .bleu_sentences = options.bleu_sentences,
                                              .decode = {}});
    nlohmann::json record{{"step", state.step},
                          {"split", "valid"},
                          {"loss", result.loss},
                          {"nll", result.nll},
                          {"perplexity", result.perplexity},
                          {"token_accuracy", result.token_accuracy},
                          {"target_tokens", result.target_tokens}};
    if (result.bleu_sentences > 0) {
      record["bleu"] = result.bleu.score;
      record["bleu_sentences"] = result.bleu_sentences;
    }
    if (log) metrics->write(record);
    summary.valid_loss = result.loss;
    summary.token_accuracy = result.token_accuracy;
    summary.bleu = result.bleu.score;
    say(fmt::format("step {} valid: loss {:.4f}, ppl {:.2f}, token accuracy {:.2f}%{}", state.step, result.loss,
                    result.perplexity, result.token_accuracy,
                    result.bleu_sentences
                        ? fmt::format(", BLEU {:.2f} ({} sentences)", result.bleu.score, result.bleu_sentences)
                        : ""));
    // best.safetensors first, then the step checkpoint that records its accuracy: killed between the two,
    // the resumed run repeats this validation from the previous checkpoint and writes both again.
    if (result.token_accuracy > state.best_valid_accuracy) {
      state.best_valid_accuracy = result.token_accuracy;
      write_checkpoint(best_path.string());
    }
    // Early stopping's count, before the step checkpoint that records it (a kill between the two repeats this
    // validation from the previous checkpoint's count: the same outcome). A loss that is not finite is never
    // lower, nor kept as the lowest.
    if (kind == Validation::scheduled) {
      if (std::isfinite(result.loss) && (!state.best_valid_loss || result.loss < *state.best_valid_loss)) {
        state.best_valid_loss = result.loss;
        state.validations_since_best = 0;
      } else {
        ++state.validations_since_best;
      }
    }
    if (state.best_valid_loss) summary.best_valid_loss = *state.best_valid_loss;
    save_step_checkpoint();
  };
  auto patience_spent = [&] { return options.patience > 0 && state.validations_since_best >= options.patience; };
  // validate() and save_step_checkpoint() run on rank 0 alone, at a step where every process calls this: the
  // others send what rank 0 writes of them (their dropout stream offsets), the weights are checked to be
  // still the same everywhere, and the others wait, asleep, until rank 0 is done.
  auto at_checkpoint = [&](const std::function<void()>& rank_0_work) {
    if (distributed) {
      state.dropout_offsets = processes.all_gather(dropout.generator().offset());
      const std::vector<uint64_t> fingerprints = processes.all_gather(
          weights_fingerprint(optimizer.master_parameters()));
      for (int rank = 1; rank < processes.size(); ++rank) {
        AGF_CHECK(fingerprints[rank] == fingerprints[0],
                  "train: at step {} the weights of rank {} differ from rank "
                  "0's: the processes no longer train one model (docs/distributed.md)",
                  state.step, rank);
      }
    }
    if (root) rank_0_work();
    processes.wait_for_all();
  };

  if (state.step >= options.max_steps || patience_spent()) {
    say(state.step >= options.max_steps
            ? fmt::format("{} is already at step {} (--max-steps {}): nothing to do", options.out_dir, state.step,
                          options.max_steps)
            : fmt::format("{} stopped early at step {} (no lower validation loss in {} validations, --patience {}): "
                          "nothing to do",
                          options.out_dir, state.step, state.validations_since_best, options.patience));
    // A finished run gets its best.safetensors back: the final weights.
    if (best_lost) at_checkpoint([&] { validate(Validation::repeat); });
    summary.steps = state.step;
    summary.stopped_early = state.step < options.max_steps;
    if (state.best_valid_loss) summary.best_valid_loss = *state.best_valid_loss;
    return summary;
  }

  // ---- the loop ----
  StopOnSignal stop_on_signal;
  const auto start = std::chrono::steady_clock::now();
  const double elapsed_before = state.elapsed_seconds;
  const int64_t first_step = state.step;
  bool validated_at_current_step = false, checkpointed_at_current_step = false;
  double allreduce_seconds = 0;
  while (state.step < options.max_steps) {
    const auto step_start = std::chrono::steady_clock::now();
    double loss_sum = 0;
    int64_t step_tokens = 0;
    const double loss_scale = optimizer.loss_scale();  // 1 unless fp16
    for (int64_t micro = 0; micro < options.update_freq; ++micro) {
      // Every process draws the same global batch and computes its shard (data/batch_shard.h).
      const data::BatchSampler::Batch& global_batch = sampler.next();
      std::span<const uint32_t> rows(global_batch);
      int64_t batch_tokens = 0;  // target tokens of the global batch
      if (distributed) {
        std::vector<uint32_t> lengths;
        for (uint32_t index : global_batch) {
          lengths.push_back(sampler.lengths()[index]);
          batch_tokens += static_cast<int64_t>(train_set.target(index).size()) + 1;  // + eos
        }
        const auto [begin, end] = data::batch_shard(lengths, processes.rank(), processes.size());
        rows = rows.subspan(begin, end - begin);
        step_tokens += batch_tokens;
        if (rows.empty()) continue;  // fewer rows than processes: this one adds nothing but zeros to the sum
      }
      const Batch batch = make_batch(train_set, rows).to(options.device);
      if (!distributed) {
        batch_tokens = batch.target_tokens;
        step_tokens += batch_tokens;
      }
      // The loss is a mean over the batch's target tokens: weighted by its share of them, the shards' losses
      // (and so their gradients) sum to the whole batch's. 1 exactly in a single process.
      const double share = static_cast<double>(batch.target_tokens) / static_cast<double>(batch_tokens);
      const Variable logits = model.forward(batch.encoder_input, batch.source_lengths, batch.decoder_input, dropout);
      const Variable loss = sequence_loss(logits, batch.decoder_target, options.label_smoothing);
      // Accumulated batches: the update follows the mean of the per-batch losses; the loss scale S
      // multiplies every gradient (the optimizer divides it out again).
      (loss * (share * loss_scale / static_cast<double>(options.update_freq))).backward();
      loss_sum += loss.data().to(Device::cpu()).item() * share;
    }
    // The sum of the processes' gradients (nothing in a single process): the same on every process, and so
    // are the norm, the clipping and Adam's update below.
    const GradientSumTiming gradient_sum = sum_gradients(processes, parameters);
    const double lr = scheduled_lr(options.lr_schedule, options.lr, state.step + 1, options.warmup, options.max_steps);
    // Unscale, check, clip, Adam — or skip the update when a gradient is inf or nan.
    const UpdateOutcome update = optimizer.step(lr, options.clip_norm);
    const int64_t skipped_steps = optimizer.scaler().skipped_steps();
    ++state.step;
    const double step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
    const double run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double minutes_since_checkpoint =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint_time).count() / 60;
    // What every process must agree on: the loss of the whole batch (the sum of the shares), whether a stop
    // signal reached any of them, and rank 0's clock on the time limit and the timed checkpoints.
    std::array<double, 4> agreed{
        loss_sum, stop_on_signal.requested() != 0 ? 1.0 : 0.0,
        root && options.max_minutes > 0 && run_seconds > options.max_minutes * 60 ? 1.0 : 0.0,
        root && options.save_every_minutes > 0 && minutes_since_checkpoint >= options.save_every_minutes ? 1.0 : 0.0};
    processes.sum(agreed);
    const bool stop_requested = agreed[1] > 0, out_of_time = agreed[2] > 0, checkpoint_due = agreed[3] > 0;
    state.target_tokens += step_tokens;
    state.elapsed_seconds += step_seconds;
    const double loss = agreed[0] / static_cast<double>(options.update_freq);
    // A non-finite grad_norm (a skipped step) is written as null: JSON has no inf or nan.
    nlohmann::json record{{"step", state.step},
                          {"split", "train"},
                          {"loss", loss},
                          {"lr", lr},
                          {"grad_norm", update.grad_norm},
                          {"loss_scale", update.loss_scale},
                          {"skipped_steps", skipped_steps},
                          {"target_tokens", step_tokens},
                          {"tokens_per_second", static_cast<double>(step_tokens) / step_seconds},
                          {"epoch", sampler.position().epoch}};
    if (distributed) {
      record["processes"] = processes.size();
      record["allreduce_seconds"] = gradient_sum.communication_seconds;
      record["gradient_sum_seconds"] = gradient_sum.seconds;
      allreduce_seconds += gradient_sum.communication_seconds;
    }
    if (root) metrics->write(record);
    summary.last_loss = loss;
    summary.skipped_steps = skipped_steps;
    summary.loss_scale = optimizer.loss_scale();
    validated_at_current_step = checkpointed_at_current_step = false;

    const double throughput = static_cast<double>(state.target_tokens) / std::max(state.elapsed_seconds, 1e-9);
    summary.target_tokens_per_second = throughput;
    if (!quiet && (terminal || state.step % std::max<int64_t>(options.log_every, 1) == 0)) {
      const double per_step = (state.elapsed_seconds - elapsed_before) / static_cast<double>(state.step - first_step);
      double remaining = per_step * static_cast<double>(options.max_steps - state.step);
      if (options.max_minutes > 0)
        remaining = std::min(remaining, std::max(0.0, options.max_minutes * 60 - run_seconds));
      const std::string line = fmt::format("step {}/{} | epoch {} | loss {:.4f} | lr {:.2e} | {:.0f} tok/s{} | ETA {}",
                                           state.step, options.max_steps, sampler.position().epoch + 1, loss, lr,
                                           throughput,
                                           skipped_steps > 0 ? fmt::format(" | skipped {}", skipped_steps) : "",
                                           format_duration(remaining));
      if (terminal) {
        fmt::print(stderr, "\r\033[K{}", line);
      } else {
        fmt::print(stderr, "{}\n", line);
      }
    }
    if (state.step % options.valid_every == 0 || state.step == options.max_steps) {
      at_checkpoint([&] { validate(Validation::scheduled); });
      validated_at_current_step = checkpointed_at_current_step = true;
      if (distributed) {  // rank 0 validated: every process learns its count, and so stops at the same step
        state.validations_since_best = static_cast<int64_t>(
            processes.all_gather(static_cast<uint64_t>(state.validations_since_best))[0]);
      }
      if (patience_spent() && state.step < options.max_steps) {
        say(fmt::format("early stop at step {}: no validation loss below {:.4f} in the last {} validations "
                        "(--patience {})",
                        state.step, state.best_valid_loss.value_or(std::nan("")), state.validations_since_best,
                        options.patience));
        summary.stopped_early = true;
        break;
      }
    } else if ((options.save_every > 0 && state.step % options.save_every == 0) || checkpoint_due) {
      // The same checkpoint as a validation writes, without the validation: cheap enough to write often.
      at_checkpoint(save_step_checkpoint);
      checkpointed_at_current_step = true;
    }
    if (stop_requested || out_of_time) {
      // A signal stops at once with a checkpoint; the time limit ends the run as a normal end would.
      if (out_of_time && !stop_requested && !validated_at_current_step) {
        at_checkpoint([&] { validate(Validation::extra); });
      } else if (!checkpointed_at_current_step) {
        at_checkpoint(save_step_checkpoint);
      }
      say(stop_requested ? (stop_on_signal.requested() != 0
                                ? fmt::format("stopped by signal {} at step {}; resume with --resume",
                                              stop_on_signal.requested(), state.step)
                                : fmt::format("stopped at step {} by a signal to another process; resume with --resume",
                                              state.step))
                         : fmt::format("time limit of {} minutes reached at step {}", options.max_minutes, state.step));
      summary.interrupted = true;
      break;
    }
  }
  if (!validated_at_current_step && !summary.interrupted) at_checkpoint([&] { validate(Validation::scheduled); });
  if (terminal) fmt::print(stderr, "\n");
  summary.steps = state.step;
  if (state.step > first_step)
    summary.allreduce_seconds_per_step = allreduce_seconds / static_cast<double>(state.step - first_step);
  return summary;
}

}  // namespace agf::train
