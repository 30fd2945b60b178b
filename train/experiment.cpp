#include "train/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/text_file.h"
#include "train/atomic_file.h"
#include "train/curve_fit.h"
#include "train/mixed_precision.h"

namespace fs = std::filesystem;

namespace agf::train {

namespace {

struct RunResult {
  std::string label;
  uint64_t seed = 0;
  double token_accuracy = 0, bleu = 0, valid_loss = 0, tokens_per_second = 0;
  int64_t parameters = 0, steps = 0;
  std::vector<double> curve_steps, curve_accuracy;  // validation curve
};

fs::path run_folder(const fs::path& grid, const std::string& label, uint64_t seed) {
  return grid / "runs" / label / fmt::format("seed{}", seed);
}

// Reads a finished run's summary.json and its validation curve from metrics.jsonl.
RunResult read_run(const fs::path& folder) {
  std::ifstream summary_file(folder / "summary.json");
  const auto summary = nlohmann::json::parse(summary_file);
  RunResult result;
  result.label = summary.at("label");
  result.seed = summary.at("seed");
  result.token_accuracy = summary.at("token_accuracy");
  result.bleu = summary.at("bleu");
  result.valid_loss = summary.at("valid_loss");
  result.tokens_per_second = summary.at("tokens_per_second");
  result.parameters = summary.at("parameters");
  result.steps = summary.at("steps");
  std::ifstream metrics(folder / "metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record.at("split") != "valid") continue;
    result.curve_steps.push_back(record.at("step").get<double>());
    result.curve_accuracy.push_back(record.at("token_accuracy").get<double>());
  }
  return result;
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

// What a run's result depends on besides its seed (the folder's name): the model, every agf.config key of
// it (the scheme included), and the data, budget and optimisation. budget.json (at the run's first start)
// and summary.json (at its end) keep it, so that a run is resumed or reused only by a grid that asks for the
// same.
nlohmann::json run_budget(const TrainOptions& options) {
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
          {"clip_norm", options.clip_norm},
          {"label_smoothing", options.label_smoothing},
          {"valid_every", options.valid_every},
          {"patience", options.patience},
          {"bleu_sentences", options.bleu_sentences},
          {"device", options.device.is_cpu() ? "cpu" : "cuda"},
          {"precision", std::string(precision_name(options.precision))}};
}

// "max_steps: 200 there, 2000 here" for every key where a finished run's budget differs from the grid's.
std::string budget_differences(const nlohmann::json& stored, const nlohmann::json& wanted) {
  std::string differences;
  auto note = [&](const std::string& key, const nlohmann::json* there, const nlohmann::json& here) {
    differences += fmt::format("{}{}: {} there, {} here", differences.empty() ? "" : "; ", key,
                               there != nullptr ? there->dump() : "absent", here.dump());
  };
  for (const auto& [key, value] : wanted.items()) {
    if (key == "model") continue;
    const auto found = stored.find(key);
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

// Trains one run to completion (resuming it when a previous attempt was interrupted), or reads it when it
// finished before with the same budget; a finished run with another budget is an error, never mixed in.
RunResult run_one(const ExperimentOptions& options, const std::string& label, uint64_t seed) {
  const fs::path folder = run_folder(options.base.out_dir, label, seed);
  TrainOptions train_options = options.base;
  train_options.out_dir = folder.string();
  train_options.seed = seed;
  train_options.resume = fs::is_directory(folder / "checkpoints");  // a previous attempt was interrupted
  apply_scheme_label(label, train_options.model);
  const nlohmann::json budget = run_budget(train_options);
  if (fs::exists(folder / "summary.json")) {
    std::ifstream summary_file(folder / "summary.json");
    const auto summary = nlohmann::json::parse(summary_file, nullptr, /*allow_exceptions=*/false);
    AGF_CHECK(!summary.is_discarded(), "experiment: {} is not valid JSON", (folder / "summary.json").string());
    AGF_CHECK(summary.contains("budget"),
              "experiment: {} finished without a recorded budget (written by an older "
              "agf), so it cannot be reused safely; move that folder away to train it again",
              folder.string());
    const std::string differences = budget_differences(summary.at("budget"), budget);
    AGF_CHECK(differences.empty(),
              "experiment: {} finished with another budget than this grid's ({}); use another "
              "--out, or move that folder away to train it again",
              folder.string(), differences);
    return read_run(folder);
  }
  // An interrupted run resumes only under the budget it began with (budget.json, written before its first
  // step); a run begun by an agf that wrote none is refused the same way as a finished one without a budget.
  const fs::path budget_path = folder / "budget.json";
  if (train_options.resume) {
    std::ifstream budget_file(budget_path);
    const auto begun = nlohmann::json::parse(budget_file, nullptr, /*allow_exceptions=*/false);
    AGF_CHECK(begun.is_object(),
              "experiment: {} was begun without a readable budget.json, so it cannot be resumed safely; move that "
              "folder away to train it again",
              folder.string());
    const std::string differences = budget_differences(begun, budget);
    AGF_CHECK(differences.empty(),
              "experiment: {} was begun with another budget than this grid's ({}); resume it with its own flags, "
              "use another --out, or move that folder away to train it again",
              folder.string(), differences);
  } else {
    fs::create_directories(folder);
    AtomicFile budget_file(budget_path.string());
    const std::string budget_text = budget.dump(2) + "\n";
    budget_file.write(budget_text.data(), budget_text.size());
    budget_file.commit();
  }
  fmt::print(stderr, "experiment: {} seed {}\n", label, seed);
  const TrainSummary summary = train(train_options);
  AGF_CHECK(!summary.interrupted || options.base.max_minutes > 0,
            "experiment: {} seed {} was interrupted; run the same command again to resume", label, seed);
  const nlohmann::json record{{"label", label},
                              {"seed", seed},
                              {"token_accuracy", summary.token_accuracy},
                              {"bleu", summary.bleu},
                              {"valid_loss", summary.valid_loss},
                              {"tokens_per_second", summary.target_tokens_per_second},
                              {"parameters", summary.parameters},
                              {"steps", summary.steps},
                              {"stopped_early", summary.stopped_early},
                              {"best_valid_loss", summary.best_valid_loss},
                              {"budget", budget}};
  // Its presence marks the run done: written whole or not at all, so that a kill here never leaves a grid
  // that fails to read it.
  AtomicFile summary_file((folder / "summary.json").string());
  const std::string summary_text = record.dump(2) + "\n";
  summary_file.write(summary_text.data(), summary_text.size());
  summary_file.commit();
  return read_run(folder);
}

struct Aggregate {
  double mean = 0, spread = 0;  // spread: sample standard deviation (0 for one seed)
};

Aggregate aggregate(const std::vector<double>& values) {
  Aggregate result;
  for (double v : values) result.mean += v / static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - result.mean) * (v - result.mean);
    result.spread = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return result;
}

std::string format_mean(const std::vector<double>& values, int decimals) {
  const Aggregate a = aggregate(values);
  if (values.size() < 2) return fmt::format("{:.{}f}", a.mean, decimals);
  return fmt::format("{:.{}f} ± {:.{}f}", a.mean, decimals, a.spread, decimals);
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

std::string run_experiment(const ExperimentOptions& options) {
  const std::vector<std::string> schemes = options.schemes.empty() ? paper_grid() : options.schemes;
  for (const auto& label : schemes) {
    nn::TransformerConfig config = options.base.model;
    apply_scheme_label(label, config);  // validates every label before hours of training
  }
  std::map<std::string, std::vector<RunResult>> results;
  for (const auto& label : schemes) {
    for (int s = 0; s < options.seeds; ++s) results[label].push_back(run_one(options, label, options.base.seed + s));
  }
  // Extra seeds for the best schemes.
  std::vector<std::string> ranked = schemes;
  auto mean_accuracy = [&](const std::string& label) {
    std::vector<double> values;
    for (const auto& run : results[label]) values.push_back(run.token_accuracy);
    return aggregate(values).mean;
  };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto& a, const auto& b) { return mean_accuracy(a) > mean_accuracy(b); });
  for (int i = 0; i < std::min<int>(options.best_count, static_cast<int>(ranked.size())); ++i) {
    for (int s = options.seeds; s < options.best_seeds; ++s) {
      results[ranked[i]].push_back(run_one(options, ranked[i], options.base.seed + s));
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto& a, const auto& b) { return mean_accuracy(a) > mean_accuracy(b); });

  // ---- results.md ----
  const auto& base = options.base;
  std::string text = "# Results: the paper's comparison on this corpus\n\n";
  text += fmt::format(
      "Preset `{}`, {} steps of at most {} padded tokens (update-freq {}), peak lr {}, warmup {}, "
      "validation every {} steps; data `{}`. Token accuracy (SPEC §6) and BLEU on the validation "
      "split, mean ± sample standard deviation over seeds. `a, b, c`: the fit "
      "`acc(t) = a - b·t^(-c)` of the mean validation curve; `a` is its extrapolated ceiling (\"no ceiling yet\" "
      "when the curve is still log-linear and the fit's exponent runs to 0).\n\n",
      base.model.preset, base.max_steps, base.max_tokens, base.update_freq, base.lr, base.warmup, base.valid_every,
      base.data_dir);
  text +=
      "| scheme | seeds | token accuracy % | BLEU | valid loss | parameters | target tokens/s | fit a [95 % interval] | fit b | fit c |\n";
  text += "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& label : ranked) {
    const auto& runs = results[label];
    std::vector<double> accuracy, bleu, loss, speed;
    for (const auto& run : runs) {
      accuracy.push_back(run.token_accuracy);
      bleu.push_back(run.bleu);
      loss.push_back(run.valid_loss);
      speed.push_back(run.tokens_per_second);
    }
    // The mean curve over seeds (runs share validation steps), then its fit.
    std::string fit_columns = "— | — | —";
    const auto& steps = runs.front().curve_steps;
    if (steps.size() >= 3) {
      std::vector<double> mean_curve(steps.size(), 0.0);
      bool aligned = true;
      for (const auto& run : runs) {
        aligned = aligned && run.curve_steps == steps;
        for (std::size_t i = 0; aligned && i < steps.size(); ++i) mean_curve[i] += run.curve_accuracy[i] / runs.size();
      }
      if (aligned) {
        const PowerLawFit fit = fit_power_law(steps, mean_curve);
        if (fit.at_ceiling) {  // the free fit's a exceeded 100 %: not a ceiling the data bound
          fit_columns = fmt::format("none below 100 (held at 100) | {:.3g} | {:.3f}", fit.b, fit.c);
        } else if (!fit.identified) {
          fit_columns = "no ceiling yet (c → 0) | — | —";
        } else {
          const CeilingInterval interval = ceiling_interval(steps, mean_curve, fit);
          fit_columns = fmt::format("{:.2f} [{:.2f}, {:.2f}] | {:.3g} | {:.3f}", fit.a, interval.low, interval.high,
                                    fit.b, fit.c);
        }
      }
    }
    text += fmt::format("| {} | {} | {} | {} | {} | {} | {:.0f} | {} |\n", label, runs.size(), format_mean(accuracy, 2),
                        format_mean(bleu, 2), format_mean(loss, 3), runs.front().parameters, aggregate(speed).mean,
                        fit_columns);
  }
  fs::create_directories(base.out_dir);
  data::write_file((fs::path(base.out_dir) / "results.md").string(), text);
  return text;
}

}  // namespace agf::train
