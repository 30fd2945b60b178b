#include "train/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/bpe_codec.h"
#include "data/text_file.h"
#include "data/token_dataset.h"
#include "ops/cpu/gemm_bf16.h"
#include "train/atomic_file.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/experiment_report.h"
#include "train/mixed_precision.h"
#include "train/sample_summary.h"
#include "train/sentence_scores.h"

namespace fs = std::filesystem;

namespace agf::train {

namespace {

// The splits a grid evaluates each run on: valid, and test where the dataset has one.
std::vector<std::string> evaluated_splits(const std::string& data_dir) {
  std::vector<std::string> splits{"valid"};
  if (fs::exists(fs::path(data_dir) / "test.bin")) splits.push_back("test");
  return splits;
}

fs::path work_folder(const ExperimentOptions& options, const std::string& label, uint64_t seed) {
  return fs::path(options.base.out_dir) / "runs" / label / fmt::format("seed{}", seed);
}

fs::path record_folder(const ExperimentOptions& options, const std::string& label, uint64_t seed) {
  if (options.results_dir.empty()) return work_folder(options, label, seed);
  return fs::path(options.results_dir) / label / fmt::format("seed{}", seed);
}

std::string sentences_file(const std::string& split) { return split + ".sentences.jsonl.xz"; }

// A finished run's record, read back (train/experiment.h lists its files).
GridRun read_run(const fs::path& record) {
  std::ifstream summary_file(record / "summary.json");
  const auto summary = nlohmann::json::parse(summary_file);
  GridRun run;
  try {
    run.label = summary.at("label");
    run.seed = summary.at("seed");
    run.parameters = summary.at("parameters");
    run.steps = summary.at("steps");
    run.stopped_early = summary.at("stopped_early");
    run.tokens_per_second = summary.at("tokens_per_second");
    for (const auto& [split, metrics] : summary.at("splits").items()) {
      SplitMetrics& m = run.splits[split];
      m.loss = metrics.at("loss");
      m.nll = metrics.at("nll");
      m.token_accuracy = metrics.at("token_accuracy");
      m.bleu = metrics.at("bleu");
      m.sentences = metrics.at("sentences");
      m.sentences_file = (record / sentences_file(split)).string();
    }
  } catch (const nlohmann::json::exception& error) {
    fail("experiment: {}: {}", (record / "summary.json").string(), error.what());
  }
  for (const std::string& line : data::read_lines((record / "metrics.jsonl.xz").string())) {
    if (line.empty()) continue;
    const auto entry = nlohmann::json::parse(line);
    if (entry.at("split") != "valid") continue;
    run.curve_steps.push_back(entry.at("step").get<double>());
    run.curve_accuracy.push_back(entry.at("token_accuracy").get<double>());
    run.curve_loss.push_back(entry.at("loss").get<double>());
  }
  return run;
}

// `value` as indented JSON at `path`, whole or not at all (train/atomic_file.h).
void write_json_atomically(const fs::path& path, const nlohmann::json& value) {
  AtomicFile file(path.string());
  const std::string text = value.dump(2) + "\n";
  file.write(text.data(), text.size());
  file.commit();
}

// The processor, and for a bf16 run the bf16 kernel agf picks on it (bf16 runs are not bit-identical across
// kernels; an f32 run does not ask for one, which on an AMX processor would ask Linux for the tile registers).
nlohmann::json machine(Precision precision) {
  std::string cpu = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  nlohmann::json machine{{"cpu", cpu}};
  if (precision == Precision::bf16) machine["bf16_kernel"] = ops::cpu::bf16_kernel_name(ops::cpu::bf16_kernel());
  return machine;
}

// The prepared dataset by its contents, not its path (the same data moved is the same; data prepared again
// into the same folder is not): prepare.json's vocabulary hash and each split's pairs and tokens, or, for a
// folder without one, the sizes of its files.
nlohmann::json data_identity(const std::string& data_dir) {
  const fs::path folder(data_dir);
  std::ifstream prepare_file(folder / "prepare.json");
  const auto prepare = nlohmann::json::parse(prepare_file, nullptr, /*allow_exceptions=*/false);
  if (prepare.is_object() && prepare.contains("vocab_hash") && prepare.contains("splits")) {
    nlohmann::json identity{{"vocab_hash", prepare.at("vocab_hash")}};
    for (const auto& [split, counts] : prepare.at("splits").items()) {
      for (const char* key : {"kept", "source_tokens", "target_tokens"}) {
        if (counts.contains(key)) identity[split][key] = counts.at(key);
      }
    }
    return identity;
  }
  nlohmann::json sizes;
  for (const char* file : {"bpe.json", "train.bin", "valid.bin"}) {
    std::error_code error;
    const auto size = fs::file_size(folder / file, error);
    sizes[std::string(file) + " bytes"] = error ? -1 : static_cast<int64_t>(size);
  }
  return sizes;
}

// The bound on each side's length the training split was prepared with (prepare.json's per-split bound, or its
// one bound for a dataset prepared before there was one per split); 0 when the folder has no prepare.json.
int64_t training_max_length(const std::string& data_dir) {
  std::ifstream prepare_file(fs::path(data_dir) / "prepare.json");
  const auto prepare = nlohmann::json::parse(prepare_file, nullptr, /*allow_exceptions=*/false);
  if (!prepare.is_object()) return 0;
  const auto train_bound = prepare.value("/splits/train/max_length"_json_pointer, nlohmann::json());
  if (train_bound.is_number_integer()) return train_bound.get<int64_t>();
  return prepare.value("max_length", int64_t{0});
}

// What a run's result depends on besides its seed (the folder's name): the model, every agf.config key of
// it (the scheme included), the data, budget and optimisation, and how its best checkpoint is evaluated.
// budget.json (at the run's first start) and summary.json (at its end) keep it, so that a run is resumed or
// reused only by a grid that asks for the same.
nlohmann::json run_budget(const TrainOptions& options, int beam) {
  nlohmann::json model = nlohmann::json::object();
  for (const auto& [key, value] : options.model.to_metadata()) model[key] = value;
  return {{"model", model},
          {"data", data_identity(options.data_dir)},
          {"max_steps", options.max_steps},
          {"max_minutes", options.max_minutes},
          {"max_tokens", options.max_tokens},
          {"update_freq", options.update_freq},
          {"lr", options.lr},
          {"warmup", options.warmup},
          {"lr_schedule", std::string(lr_schedule_name(options.lr_schedule))},
          {"clip_norm", options.clip_norm},
          {"label_smoothing", options.label_smoothing},
          {"valid_every", options.valid_every},
          {"patience", options.patience},
          {"bleu_sentences", options.bleu_sentences},
          {"device", options.device.is_cpu() ? "cpu" : "cuda"},
          {"precision", std::string(precision_name(options.precision))},
          {"evaluation", {{"checkpoint", "best"}, {"beam", beam}, {"splits", evaluated_splits(options.data_dir)}}}};
}

// "max_steps: 200 there, 2000 here" for every key where a finished run's budget differs from the grid's.
std::string budget_differences(const nlohmann::json& stored, const nlohmann::json& wanted) {
  std::string differences;
  auto note = [&](const std::string& key, const nlohmann::json* there, const nlohmann::json& here) {
    differences += fmt::format("{}{}: {} there, {} here", differences.empty() ? "" : "; ", key,
                               there != nullptr ? there->dump() : "absent", here.dump());
  };
  // Keys added to the budget after records were first written, with the value every older run had.
  const nlohmann::json older_runs = {{"lr_schedule", "inverse-sqrt"}};
  for (const auto& [key, value] : wanted.items()) {
    if (key == "model") continue;
    const auto found = stored.find(key);
    if (found == stored.end() && older_runs.contains(key) && older_runs.at(key) == value) continue;
    if (found == stored.end() || *found != value) note(key, found == stored.end() ? nullptr : &*found, value);
  }
  const nlohmann::json no_model = nlohmann::json::object();
  const nlohmann::json& stored_model = stored.contains("model") ? stored.at("model") : no_model;
  for (const auto& [key, value] : wanted.at("model").items()) {
    const auto found = stored_model.find(key);
    if (found == stored_model.end() || *found != value)
      note(key, found == stored_model.end() ? nullptr : &*found, value);
  }
  return differences;
}

// Evaluates the run's best checkpoint on each split (token accuracy, loss, BLEU of beam-search translations
// of every pair), writes each split's per-sentence scores into the record folder, and returns the metrics.
nlohmann::json evaluate_run(const ExperimentOptions& options, const TrainOptions& train_options, const fs::path& work,
                            const fs::path& record) {
  fs::path checkpoint = work / "checkpoints" / "best.safetensors";
  if (!fs::exists(checkpoint)) checkpoint = latest_checkpoint(work.string());
  AGF_CHECK(!checkpoint.empty() && fs::exists(checkpoint), "experiment: {} has no checkpoint to evaluate",
            work.string());
  auto loaded = load_model(checkpoint.string());
  loaded.model->to(train_options.device);
  const data::BpeCodec codec(loaded.bpe);
  nlohmann::json splits = nlohmann::json::object();
  for (const std::string& split : evaluated_splits(train_options.data_dir)) {
    const auto dataset = data::TokenDataset::open((fs::path(train_options.data_dir) / (split + ".bin")).string(),
                                                  loaded.bpe.hash());
    EvaluationOptions evaluation;
    evaluation.max_tokens = train_options.max_tokens;
    evaluation.label_smoothing = train_options.label_smoothing;
    evaluation.bleu_sentences = static_cast<int64_t>(dataset.size());
    evaluation.decode.beam = options.beam;
    evaluation.per_sentence = true;
    if (!train_options.quiet) {
      fmt::print(stderr, "experiment: evaluating {} on {} ({} pairs, beam {})\n", checkpoint.string(), split,
                 dataset.size(), options.beam);
    }
    const EvaluationResult result = evaluate(*loaded.model, dataset, codec, evaluation);
    write_sentence_scores((record / sentences_file(split)).string(), result.sentences);
    splits[split] = {{"loss", result.loss},
                     {"nll", result.nll},
                     {"token_accuracy", result.token_accuracy},
                     {"bleu", result.bleu.score},
                     {"bleu_detail", result.bleu.to_string()},
                     {"sentences", result.bleu_sentences},
                     {"target_tokens", result.target_tokens}};
  }
  return splits;
}

// Trains one run to completion (resuming it when a previous attempt was interrupted), evaluates it and
// writes its record; or reads its record when it finished before with the same budget. A record with another
// budget is an error, never mixed in.
GridRun run_one(const ExperimentOptions& options, const std::string& label, uint64_t seed) {
  const fs::path work = work_folder(options, label, seed), record = record_folder(options, label, seed);
  TrainOptions train_options = options.base;
  train_options.out_dir = work.string();
  train_options.seed = seed;
  train_options.resume = fs::is_directory(work / "checkpoints");  // a previous attempt was interrupted
  apply_scheme_label(label, train_options.model);
  const nlohmann::json budget = run_budget(train_options, options.beam);
  if (fs::exists(record / "summary.json")) {
    std::ifstream summary_file(record / "summary.json");
    const auto summary = nlohmann::json::parse(summary_file, nullptr, /*allow_exceptions=*/false);
    AGF_CHECK(!summary.is_discarded(), "experiment: {} is not valid JSON", (record / "summary.json").string());
    AGF_CHECK(summary.contains("budget"),
              "experiment: {} finished without a recorded budget (written by an older "
              "agf), so it cannot be reused safely; move that folder away to train it again",
              record.string());
    const std::string differences = budget_differences(summary.at("budget"), budget);
    AGF_CHECK(differences.empty(),
              "experiment: {} finished with another budget than this grid's ({}); use another "
              "--out, or move that folder away to train it again",
              record.string(), differences);
    return read_run(record);
  }
  // An interrupted run resumes only under the budget it began with (budget.json, written before its first
  // step); a run begun by an agf that wrote none is refused the same way as a finished one without a budget.
  const fs::path budget_path = work / "budget.json";
  if (train_options.resume) {
    std::ifstream budget_file(budget_path);
    const auto begun = nlohmann::json::parse(budget_file, nullptr, /*allow_exceptions=*/false);
    AGF_CHECK(begun.is_object(),
              "experiment: {} was begun without a readable budget.json, so it cannot be resumed safely; move that "
              "folder away to train it again",
              work.string());
    const std::string differences = budget_differences(begun, budget);
    AGF_CHECK(differences.empty(),
              "experiment: {} was begun with another budget than this grid's ({}); resume it with its own flags, "
              "use another --out, or move that folder away to train it again",
              work.string(), differences);
  } else {
    fs::create_directories(work);
    write_json_atomically(budget_path, budget);
  }
  // trained.json marks the training done, so that a run killed during its evaluation is not trained again.
  const fs::path trained_path = work / "trained.json";
  nlohmann::json trained = nlohmann::json::parse(std::ifstream(trained_path), nullptr, /*allow_exceptions=*/false);
  if (!trained.is_object()) {
    fmt::print(stderr, "experiment: {} seed {}\n", label, seed);
    const TrainSummary summary = train(train_options);
    AGF_CHECK(!summary.interrupted || options.base.max_minutes > 0,
              "experiment: {} seed {} was interrupted; run the same command again to resume", label, seed);
    trained = {{"steps", summary.steps},
               {"parameters", summary.parameters},
               {"tokens_per_second", summary.target_tokens_per_second},
               {"stopped_early", summary.stopped_early},
               {"best_valid_loss", summary.best_valid_loss}};
    write_json_atomically(trained_path, trained);
  }
  fs::create_directories(record);
  const nlohmann::json splits = evaluate_run(options, train_options, work, record);
  data::write_file((record / "metrics.jsonl.xz").string(), data::read_file((work / "metrics.jsonl").string()),
                   /*compress_xz=*/true);
  nlohmann::json record_summary{{"label", label}, {"seed", seed}};
  record_summary.update(trained);
  record_summary["splits"] = splits;
  record_summary["machine"] = machine(train_options.precision);
  record_summary["budget"] = budget;
  // Its presence marks the run done: written whole or not at all, last, so that a kill before it leaves a run
  // that the next attempt evaluates again, never a record that fails to read.
  write_json_atomically(record / "summary.json", record_summary);
  return read_run(record);
}

}  // namespace

std::vector<std::string> paper_grid() {
  return {"vanilla",         "agf-b", "agf-b+pcmv", "agf-m+pcmv", "agf-f+pcmv",       "alibi",
          "alibi-mult+pcmv", "rope",  "t5",         "kerple-log", "agf-m+pcmv+abs-pe"};
}

void apply_scheme_label(const std::string& label, nn::TransformerConfig& config) {
  const std::string scheme = label.substr(0, label.find('+'));
  config.pos = scheme == "vanilla" ? "sinusoidal" : scheme;
  config.pcmv = label.find("+pcmv") != std::string::npos;
  config.abs_pe = label.find("+abs-pe") != std::string::npos;
  for (std::size_t at = label.find('+'); at != std::string::npos; at = label.find('+', at + 1)) {
    const std::string part = label.substr(at + 1, label.find('+', at + 1) - at - 1);
    AGF_CHECK(part == "pcmv" || part == "abs-pe", "scheme label '{}': unknown part '+{}' (expected +pcmv or +abs-pe)",
              label, part);
  }
  nn::TransformerConfig checked = config;
  checked.vocabulary_size = std::max<int64_t>(checked.vocabulary_size, 1);
  checked.validate();
}

std::vector<std::string> best_schemes(const GridReport& report, int count) {
  auto mean_valid_accuracy = [&](const std::string& label) {
    const auto found = report.runs.find(label);
    if (found == report.runs.end() || found->second.empty()) return -1.0;
    std::vector<double> accuracy;
    for (const GridRun& run : found->second) accuracy.push_back(run.splits.at("valid").token_accuracy);
    return summarize(accuracy).mean;
  };
  std::vector<std::string> ranked = report.labels;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto& a, const auto& b) { return mean_valid_accuracy(a) > mean_valid_accuracy(b); });
  ranked.resize(std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(std::max(count, 0))));
  return ranked;
}

std::string run_experiment(const ExperimentOptions& options) {
  const std::string schedule_problem = lr_schedule_problem(options.base.lr_schedule, options.base.warmup,
                                                           options.base.max_steps);
  AGF_CHECK(schedule_problem.empty(), "experiment: {}", schedule_problem);  // before any run's folder exists
  const std::vector<std::string> schemes = options.schemes.empty() ? paper_grid() : options.schemes;
  for (const auto& label : schemes) {
    nn::TransformerConfig config = options.base.model;
    apply_scheme_label(label, config);  // validates every label before hours of training
  }
  const auto& base = options.base;
  GridReport report;
  report.labels = schemes;
  report.length_bounds = options.length_bounds;
  report.training_max_length = training_max_length(base.data_dir);
  report.warmup = base.warmup;
  report.seeds = options.seeds;
  report.heading = fmt::format(
      "Preset `{}`, at most {} updates of at most {} padded tokens (update-freq {}), peak lr {}, warmup {}, {} "
      "learning-rate schedule, "
      "validation every {} updates, early stopping after {} validations without a lower validation loss "
      "(0: none), {}; data `{}`. Each run's best checkpoint (lowest validation loss) is evaluated on every "
      "split: token accuracy (SPEC §6) and loss teacher-forced, BLEU of beam-{} translations of every pair.",
      base.model.preset, base.max_steps, base.max_tokens, base.update_freq, base.lr, base.warmup,
      lr_schedule_name(base.lr_schedule), base.valid_every, base.patience, precision_name(base.precision),
      base.data_dir, options.beam);
  if (report.training_max_length > 0) {
    report.heading += fmt::format(" Training pairs have at most {} BPE tokens a side.", report.training_max_length);
  }
  const fs::path results = options.results_dir.empty() ? fs::path(base.out_dir) : fs::path(options.results_dir);
  // results.md and its plots, rewritten after every run: a grid stopped part-way has the report of what it
  // finished.
  std::string text;
  auto write_report = [&] {
    text = results_markdown(report);
    fs::create_directories(results);
    data::write_file((results / "results.md").string(), text);
    data::write_file((results / "curves.svg").string(), curves_svg(report));
    if (!report.length_bounds.empty()) data::write_file((results / "length.svg").string(), length_svg(report));
  };
  // Seed by seed across the schemes: a grid stopped part-way has every row at the same number of seeds (or one
  // fewer), not some rows complete and others absent.
  for (int s = 0; s < options.seeds; ++s) {
    for (const auto& label : schemes) {
      report.runs[label].push_back(run_one(options, label, base.seed + s));
      write_report();
    }
  }
  // Then the extra seeds of the best schemes, if asked for.
  for (const std::string& label : best_schemes(report, options.best_count)) {
    for (int s = options.seeds; s < options.best_seeds; ++s) {
      report.runs[label].push_back(run_one(options, label, base.seed + s));
      write_report();
    }
  }
  return text;
}

}  // namespace agf::train
