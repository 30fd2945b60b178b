// results.md of a grid (train/experiment_report.h): the claim verdicts' rule, and the claims and length tables
// computed from per-sentence records made up so that the answer is known.
#include <catch2/catch.hpp>

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
    s.hypothesis = s.reference = "x";
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

TEST_CASE("a claim's verdict needs the interval, the p-value and every seed on one side", "[train][experiment]") {
  CHECK(claim_verdict(+1, 0.5, 1.5, 0.001, {1.0, 0.8, 1.2}) == "holds");
  CHECK(claim_verdict(+1, -1.5, -0.5, 0.001, {-1.0, -0.8, -1.2}) == "reversed");
  CHECK(claim_verdict(+1, -0.5, 1.5, 0.30, {1.0, -0.8, 1.2}) == "not distinguishable");
  CHECK(claim_verdict(+1, 0.5, 1.5, 0.001, {1.0, -0.8, 1.2}) == "not distinguishable (the seeds disagree)");
  CHECK(claim_verdict(+1, 0.5, 1.5, 0.06, {1.0, 0.8, 1.2}) == "not distinguishable");
  CHECK(claim_verdict(0, -0.5, 0.5, 0.8, {0.1, -0.1, 0.0}) == "holds (not distinguishable)");
  CHECK(claim_verdict(0, 0.5, 1.5, 0.001, {1.0, 0.8, 1.2}) == "does not hold");
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
                                   "+30.00 [+30.00, +30.00], p = 0.001 |"));
  CHECK_THAT(text, Catch::Contains("| +30.00, +30.00 | holds |"));
  CHECK_THAT(text, Catch::Contains("| agf-b vs vanilla | AGF without PCM-V is level with Vanilla"));
  CHECK_THAT(text, Catch::Contains("| +0.00, +0.00 | holds (not distinguishable) |"));
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv vs vanilla |"));
  CHECK(text.find("| agf-m+pcmv vs") == std::string::npos);  // a claim whose rows the grid lacks is left out
  // Sources of 10 + i % 60 tokens: 31 of each 60 are <= 40, and the last 20 are: 3·31 + 20 = 113.
  CHECK_THAT(text, Catch::Contains("| 0–40 | > 40 |"));
  CHECK_THAT(text, Catch::Contains("| agf-b+pcmv | 80.00 ± 0.00 | 80.00 ± 0.00 |"));
  CHECK_THAT(text, Catch::Contains("| (test pairs) | 113 | 87 |"));
}
