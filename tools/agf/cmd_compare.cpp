// agf compare: two models' per-sentence scores on the same split (`agf eval --sentences`), compared by paired
// bootstrap resampling over sentences (train/paired_bootstrap.h): each metric's difference, its 95 % interval,
// the p-value and a verdict.
#include <fmt/core.h>

#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "train/paired_bootstrap.h"
#include "train/sentence_scores.h"

namespace {

struct CompareFlags {
  std::string a, b;
  int resamples = 1000;
  uint64_t seed = 1;
};

void run_compare(const CompareFlags& flags) {
  const auto a = agf::train::read_sentence_scores(flags.a);
  const auto b = agf::train::read_sentence_scores(flags.b);
  fmt::print("a: {}\nb: {}\n{} paired resamples (seed {})\n", flags.a, flags.b, flags.resamples, flags.seed);
  fmt::print("{:<30} {:>8} {:>8} {:>8}  {:<18} {:>7}  {}\n", "metric", "a", "b", "b - a", "95 % interval", "p",
             "verdict");
  auto row = [&](const std::string& name, const std::vector<agf::train::SentenceScore>& sa,
                 const std::vector<agf::train::SentenceScore>& sb, agf::train::PairedMetric metric) {
    const auto c = agf::train::paired_bootstrap(sa, sb, metric, flags.resamples, flags.seed);
    fmt::print("{:<30} {:>8.2f} {:>8.2f} {:>+8.2f}  {:<18} {:>7.4f}  {}\n", name, c.a, c.b, c.difference,
               fmt::format("[{:+.2f}, {:+.2f}]", c.low, c.high), c.p_value, c.verdict());
  };
  row(fmt::format("token accuracy % ({} pairs)", a.size()), a, b, agf::train::PairedMetric::token_accuracy);
  // BLEU over the sentences both files translated (agf eval --bleu-sentences N: the first N), when the sets
  // themselves match (paired_bootstrap above has checked that).
  std::vector<agf::train::SentenceScore> translated_a, translated_b;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].translated || !b[i].translated) continue;
    translated_a.push_back(a[i]);
    translated_b.push_back(b[i]);
  }
  if (translated_a.empty()) {
    fmt::print("BLEU: not compared, no sentence is translated in both (agf eval --bleu-sentences)\n");
  } else {
    row(fmt::format("BLEU ({} translated pairs)", translated_a.size()), translated_a, translated_b,
        agf::train::PairedMetric::bleu);
  }
}

const agf::cli::Registration registration{
    "compare", "Paired bootstrap of two models' per-sentence scores on the same split", [](CLI::App& command) {
      auto flags = std::make_shared<CompareFlags>();
      command.add_option("a", flags->a, "Per-sentence scores of model a (agf eval --sentences)")
          ->required()
          ->check(CLI::ExistingFile);
      command.add_option("b", flags->b, "Per-sentence scores of model b, on the same split")
          ->required()
          ->check(CLI::ExistingFile);
      command.add_option("--resamples", flags->resamples, "Bootstrap resamples")
          ->capture_default_str()
          ->check(agf::cli::number_between(1, 1000000));
      command.add_option("--seed", flags->seed, "Seed of the resampling")->capture_default_str();
      command.callback([flags] { run_compare(*flags); });
    }};

}  // namespace
