// results.md of a grid (train/experiment_report.h): the claim verdicts' rule, and the claims and length tables
// computed from per-sentence records made up so that the answer is known.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/data/scratch_dir.h"
#include "train/experiment_report.h"
#include "train/sentence_scores.h"

namespace {

using agf::train::claim_verdict;

// `n` test sentences of 10 target tokens; sentence i has `correct(i)` right and a source of 10 + i % 60 tokens.
template <typename Correct>
std::string sentence_file(const agf::test::ScratchDir& scratch, const std::string& name, int n, Correct correct) {
  std::vector<agf::train::SentenceScore> sentences(n);
  for (int i = 0; i < n; ++i) {
    auto& s = sentences[i];
    s.index = i;
    s.source_tokens = 10 + i % 60;
    s.target_tokens = 10;
    s.correct = correct(i);
    s.nll = 1;
    s.translated = true;
    s.hypothesis = std::string(1, 'x');
    s.reference = s.hypothesis;
    for (int k = 0; k < 4; ++k) s.bleu.totals[k] = 10 - k, s.bleu.matches[k] = std::min<int64_t>(s.correct, 10 - k);
    s.bleu.hypothesis_length = s.bleu.reference_length = 10;
  }
  const std::string path = scratch.file(name + ".sentences.jsonl.xz");
  agf::train::write_sentence_scores(path, sentences);
  return path;
}

agf::train::GridRun grid_run(const std::string& label, uint64_t seed, double accuracy, const std::string& sentences) {
  agf::train::GridRun run;
  run.label = label;
  run.seed = seed;
  run.steps = 100;
  run.parameters = 1000;
  run.splits["valid"].token_accuracy = accuracy;
  auto& test = run.splits["test"];
  test.token_accuracy = accuracy;
  test.sentences = 200;
  test.sentences_file = sentences;
  return run;
}

}  // namespace

// A bootstrap's result with the given p, 95 % and 90 % intervals.
agf::train::PairedComparison sentences(double p_value, double low, double high, double low_90, double high_90) {
  agf::train::PairedComparison comparison;
  comparison.p_value = p_value;
  comparison.low = low, comparison.high = high, comparison.low_90 = low_90, comparison.high_90 = high_90;
  return comparison;
}

TEST_CASE("a claim's verdict needs the difference over test sentences and over seeds", "[train][experiment]") {
  const auto ahead = sentences(0.001, 0.5, 1.5, 0.6, 1.4), behind = sentences(0.001, -1.5, -0.5, -1.4, -0.6);
  CHECK(claim_verdict(+1, ahead, {1.0, 0.8, 1.2}) == "holds");
  CHECK(claim_verdict(+1, behind, {-1.0, -0.8, -1.2}) == "reversed");
  CHECK(claim_verdict(+1, sentences(0.30, -0.5, 1.5, -0.3, 1.2), {1.0, 0.8, 1.2}) == "not distinguishable");
  CHECK(claim_verdict(+1, sentences(0.06, 0.01, 1.5, 0.1, 1.4), {1.0, 0.8, 1.2}) == "not distinguishable");
  // The sentences see it, the seeds do not: one seed the other way, or all one way but too spread (t = 1.88).
  CHECK(claim_verdict(+1, ahead, {1.0, -0.8, 1.2}) == "not distinguishable over seeds");
  CHECK(claim_verdict(+1, ahead, {2.0, 0.1, 1.0}) == "not distinguishable over seeds");
  CHECK_THAT(claim_verdict(+1, ahead, {1.0}), Catch::StartsWith("untested (one seed"));
  // Level rows: equivalence within ±0.5 by both tests' 90 % intervals, even when both see a small difference.
  CHECK(claim_verdict(0, sentences(0.6, -0.3, 0.4, -0.2, 0.3), {0.1, -0.1, 0.0}) == "holds (level within ±0.5)");
  CHECK(claim_verdict(0, sentences(0.001, 0.1, 0.3, 0.12, 0.28), {0.2, 0.18, 0.22}) == "holds (level within ±0.5)");
  CHECK(claim_verdict(0, sentences(0.6, -0.3, 0.4, -0.2, 0.6), {0.1, -0.1, 0.0}) == "inconclusive");
  CHECK(claim_verdict(0, sentences(0.6, -0.3, 0.4, -0.2, 0.3), {0.4, -0.4, 0.3}) == "inconclusive");  // seeds spread
  // Apart only when both tests' 95 % intervals lie beyond the margin: a difference they both see that may still
  // be within ±0.5 is inconclusive.
  CHECK(claim_verdict(0, sentences(0.001, 0.8, 1.5, 0.9, 1.4), {1.0, 0.8, 1.2}) == "does not hold (b ahead)");
  CHECK(claim_verdict(0, sentences(0.001, -1.5, -0.8, -1.4, -0.9), {-1.0, -0.8, -1.2}) == "does not hold (b behind)");
  CHECK(claim_verdict(0, ahead, {1.0, 0.8, 1.2}) == "inconclusive");  // the bootstrap's interval reaches 0.5
  CHECK(claim_verdict(0, sentences(0.001, 0.05, 0.55, 0.1, 0.5), {0.3, 0.25, 0.35}) == "inconclusive");
}

TEST_CASE("results.md tests the paper's claims on pooled test sentences and buckets accuracy by length",
          "[train][experiment]") {
  agf::test::ScratchDir scratch;
  agf::train::GridReport report;
  report.heading = "made-up runs";
  report.labels = {"agf-b", "agf-b+pcmv", "vanilla"};
  report.length_bounds = {40};
  // agf-b+pcmv gets 8 of 10 right on every sentence in both seeds, agf-b 5 of 10: a sure difference.
  // vanilla is agf-b to the sentence: the level claim holds.
  for (uint64_t seed : {1, 2}) {
    const std::string tag = std::to_string(seed);
    report.runs["agf-b"].push_back(
        grid_run("agf-b", seed, 50, sentence_file(scratch, "b" + tag, 200, [](int) { return 5; })));
    report.runs["agf-b+pcmv"].push_back(
        grid_run("agf-b+pcmv", seed, 80, sentence_file(scratch, "p" + tag, 200, [](int) { return 8; })));
    report.runs["vanilla"].push_back(
        grid_run("vanilla", seed, 50, sentence_file(scratch, "v" + tag, 200, [](int) { return 5; })));
  }
  const std::string text = agf::train::results_markdown(report);
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv | 2 | 100 ± 0 | 80.00 ± 0.00 |"));
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv vs agf-b | PCM-V improves AGF (70.73 vs 70.45) | 80.00 vs 50.00 | "
                                   "+30.00 [+30.00, +30.00], p < 0.001 |"));
  CHECK_THAT(text, Catch::Contains("| +30.00, +30.00 | +30.00 [+30.00, +30.00], p < 0.001 | holds |"));
  CHECK_THAT(text, Catch::Contains("| agf-b vs vanilla | AGF without PCM-V is level with Vanilla"));
  CHECK_THAT(text, Catch::Contains("| +0.00, +0.00 | +0.00 [+0.00, +0.00], p = 1.000 | holds (level within ±0.5) |"));
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv vs vanilla |"));
  // Without planned seeds, a claim whose rows the grid lacks is left out.
  CHECK(text.find("| agf-m+pcmv vs") == std::string::npos);
  // Sources of 10 + i % 60 tokens: 31 of each 60 are <= 40, and the last 20 are: 3·31 + 20 = 113.
  CHECK_THAT(text, Catch::Contains("| 0–40 | > 40 |"));
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv | 80.00 ± 0.00 | 80.00 ± 0.00 |"));
  CHECK_THAT(text, Catch::Contains("| (test pairs) | 113 | 87 |"));
}

TEST_CASE("results.md compares power-law and exponential rows on the test sentences longer than training saw",
          "[train][experiment]") {
  agf::test::ScratchDir scratch;
  agf::train::GridReport report;
  report.labels = {"alibi", "agf-b"};
  // Level on sources of at most 40 tokens (5 of 10 right); beyond, agf-b gets 9 and alibi 5.
  for (uint64_t seed : {1, 2}) {
    const std::string tag = std::to_string(seed);
    report.runs["alibi"].push_back(
        grid_run("alibi", seed, 50, sentence_file(scratch, "a" + tag, 200, [](int) { return 5; })));
    report.runs["agf-b"].push_back(grid_run(
        "agf-b", seed, 60, sentence_file(scratch, "g" + tag, 200, [](int i) { return 10 + i % 60 > 40 ? 9 : 5; })));
  }
  CHECK(agf::train::results_markdown(report).find("Beyond the training length") == std::string::npos);
  report.training_max_length = 40;
  const std::string text = agf::train::results_markdown(report);
  CHECK_THAT(text, Catch::Contains("Training and validation pairs have at most 40 BPE tokens a side"));
  CHECK_THAT(text, Catch::Contains("| agf-b vs alibi | AGF's power law against ALiBi's linear bias"));
  CHECK_THAT(text, Catch::Contains("| 90.00 vs 50.00 | +40.00 [+40.00, +40.00], p < 0.001 |"));
  CHECK_THAT(text, Catch::Contains("| +40.00, +40.00 | +40.00 [+40.00, +40.00], p < 0.001 | holds |"));
  CHECK(text.find("| kerple-log vs alibi") == std::string::npos);  // no kerple-log row
  // Level on the short sentences, 40 points ahead on the long: the lead grows by 40 points on both tests, and
  // by log(9) - log(1) = 2.197 in log-odds.
  CHECK_THAT(text, Catch::Contains("Does the lead grow beyond the training length?"));
  const std::size_t log_odds = text.find("In log-odds");
  REQUIRE(log_odds != std::string::npos);
  CHECK(text.find("| agf-b vs alibi | +0.00 | +40.00 | +40.00 [+40.00, +40.00], p < 0.001 | "
                  "+40.00, +40.00 | +40.00 [+40.00, +40.00], p < 0.001 | grows |") < log_odds);
  CHECK(text.find("| agf-b vs alibi | +0.000 | +2.197 | +2.197 [+2.197, +2.197], p < 0.001 | "
                  "+2.197, +2.197 | +2.197 [+2.197, +2.197], p < 0.001 | grows |",
                  log_odds) != std::string::npos);
  // A row 20 points ahead on every sentence is ahead beyond the training length too, but its lead does not
  // grow there.
  agf::train::GridReport everywhere = report;
  for (auto& run : everywhere.runs["agf-b"]) {
    run.splits["test"].sentences_file = sentence_file(scratch, "everywhere" + std::to_string(run.seed), 200,
                                                      [](int) { return 7; });
  }
  const std::string level_growth = agf::train::results_markdown(everywhere);
  CHECK_THAT(level_growth, Catch::Contains("| 70.00 vs 50.00 | +20.00 [+20.00, +20.00], p < 0.001 |"));
  CHECK_THAT(level_growth, Catch::Contains("| agf-b vs alibi | +20.00 | +20.00 | +0.00 [+0.00, +0.00], p = 1.000 | "
                                           "+0.00, +0.00 | +0.00 [+0.00, +0.00], p = 1.000 | not distinguishable |"));
  // Nor in log-odds: log(7/3) - log(1) on both sides of the training length.
  CHECK_THAT(level_growth,
             Catch::Contains("| agf-b vs alibi | +0.847 | +0.847 | +0.000 [+0.000, +0.000], p = 1.000 | "
                             "+0.000, +0.000 | +0.000 [+0.000, +0.000], p = 1.000 | not distinguishable |"));
  // At a bound of 60 tokens the same difference holds on the fewer sentences beyond it.
  report.training_max_length = 60;
  CHECK_THAT(agf::train::results_markdown(report), Catch::Contains("| 90.00 vs 50.00 |"));
  // No test sentence beyond the bound: no rows, no section.
  report.training_max_length = 100;
  CHECK(agf::train::results_markdown(report).find("Beyond the training length") == std::string::npos);
  CHECK(agf::train::results_markdown(report).find("Does the lead grow") == std::string::npos);
}

TEST_CASE("the grid's plots: each row's mean validation curve, and test accuracy by source length",
          "[train][experiment]") {
  agf::test::ScratchDir scratch;
  agf::train::GridReport report;
  report.labels = {"vanilla", "agf-m+pcmv", "rope"};  // rope has no run: no series
  for (uint64_t seed : {1, 2}) {
    for (const std::string label : {"vanilla", "agf-m+pcmv"}) {
      auto run = grid_run(label, seed, 50,
                          sentence_file(scratch, label + std::to_string(seed), 200, [](int i) { return i % 11; }));
      run.curve_steps = {100, 200, 300};
      run.curve_accuracy = {10.0 * seed, 20.0 * seed, 30.0 * seed};  // mean: 15, 30, 45
      report.runs[label].push_back(run);
    }
  }
  const std::string curves = agf::train::curves_svg(report);
  std::size_t polylines = 0;
  for (std::size_t at = curves.find("<polyline"); at != std::string::npos; at = curves.find("<polyline", at + 1))
    ++polylines;
  CHECK(polylines == 2);
  CHECK_THAT(curves, Catch::Contains(">agf-m+pcmv</text>"));
  CHECK(curves.find(">rope</text>") == std::string::npos);
  // The y axis spans the means 15..45 (ticks of 10 from 10 to 50), not the seeds' 10..60.
  CHECK_THAT(curves, Catch::Contains(">50</text>"));
  CHECK(curves.find(">60</text>") == std::string::npos);
  CHECK(agf::train::length_svg(report).empty());  // no length bounds
  report.length_bounds = {20, 40};
  const std::string by_length = agf::train::length_svg(report);
  const std::size_t points = by_length.find("points=\"");
  REQUIRE(points != std::string::npos);
  const std::string first = by_length.substr(points + 8, by_length.find('"', points + 8) - points - 8);
  CHECK(std::count(first.begin(), first.end(), ',') == 3);  // three buckets: 0–20, 21–40, > 40
}

TEST_CASE("a claim waits for all the seeds of both its rows, and pools only the seeds both have",
          "[train][experiment]") {
  agf::test::ScratchDir scratch;
  agf::train::GridReport report;
  report.labels = {"agf-b", "agf-b+pcmv", "vanilla"};  // vanilla has no run yet
  report.seeds = 3;
  // Seed 1 of both rows: 5 against 8 of 10 right. agf-b's seed 2 (agf-b+pcmv has none yet) gets 10 of 10:
  // pooled in, it would lift agf-b to 75 %.
  report.runs["agf-b"].push_back(grid_run("agf-b", 1, 50, sentence_file(scratch, "b1", 200, [](int) { return 5; })));
  report.runs["agf-b"].push_back(grid_run("agf-b", 2, 100, sentence_file(scratch, "b2", 200, [](int) { return 10; })));
  report.runs["agf-b+pcmv"].push_back(
      grid_run("agf-b+pcmv", 1, 80, sentence_file(scratch, "p1", 200, [](int) { return 8; })));
  const std::string text = agf::train::results_markdown(report);
  CHECK_THAT(text, Catch::Contains("**3 of 9 runs finished** (3 rows × 3 seeds)"));
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv vs agf-b | PCM-V improves AGF (70.73 vs 70.45) | 80.00 vs 50.00 |"));
  CHECK_THAT(text, Catch::Contains("| +30.00 | — | pending (1 of 3 seeds) |"));
  // A claim about a row of the grid with no run yet is listed, pending; one about a row the grid lacks is not.
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv vs vanilla | AGF + PCM-V is ahead of Vanilla (70.73 vs 70.59) | — | "
                                   "— | — | — | — | pending (0 of 3 seeds) |"));
  CHECK(text.find("| agf-m+pcmv vs agf-b+pcmv") == std::string::npos);
  report.seeds = 1;  // a grid of one seed: a difference over sentences, untested over seeds
  CHECK_THAT(agf::train::results_markdown(report), Catch::Contains("| +30.00 | — | untested (one seed"));
}

TEST_CASE("the learning-curve fit starts after the warmup, and says when a curve does not bound its ceiling",
          "[train][experiment]") {
  agf::train::GridReport report;
  report.labels = {"vanilla"};
  auto run = grid_run("vanilla", 1, 60, "");  // no test records: no claims
  for (int t = 100; t <= 3000; t += 100) {
    run.curve_steps.push_back(t);
    // The warmup's rise, 2 points a validation, then exactly 70 - 400·t^(-0.7).
    run.curve_accuracy.push_back(t <= 400 ? t / 50.0 : 70 - 400 * std::pow(t, -0.7));
  }
  report.runs["vanilla"] = {run};
  report.warmup = 400;
  const std::string text = agf::train::results_markdown(report);
  CHECK_THAT(text, Catch::Contains("| 70.00 [70.00, 70.00] | 400 | 0.700 |"));
  CHECK_THAT(text, Catch::Contains("from the first validation after the warmup (400 updates)"));
  report.warmup = 0;  // the warmup's rise bends the fit away from the curve after it
  CHECK(agf::train::results_markdown(report).find("| 70.00 [") == std::string::npos);
  // Still log-linear: 10·ln t gives no ceiling under 100.
  for (std::size_t i = 0; i < run.curve_steps.size(); ++i) run.curve_accuracy[i] = 10 * std::log(run.curve_steps[i]);
  report.runs["vanilla"] = {run};
  report.warmup = 400;
  CHECK_THAT(agf::train::results_markdown(report), Catch::Contains("| not identified (a free fit puts a above 100) |"));
  // Flat after the warmup but for a drop at its first validation: the exponent runs to the top of its range.
  for (std::size_t i = 0; i < run.curve_steps.size(); ++i) run.curve_accuracy[i] = run.curve_steps[i] == 500 ? 50 : 60;
  report.runs["vanilla"] = {run};
  CHECK_THAT(agf::train::results_markdown(report),
             Catch::Contains("| not identified (c = 4.00, at the end of its range)"));
}
