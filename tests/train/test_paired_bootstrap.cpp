// Per-sentence evaluation and the paired bootstrap (train/sentence_scores.h, train/paired_bootstrap.h): corpus
// BLEU is the score of its sentences' summed statistics; the bootstrap finds no difference between a model and
// itself, a clear one where one model is better on every sentence, and the same one with the models swapped;
// bad pairs of files are errors naming what differs; `agf eval --sentences` adds up to the corpus figures and
// `agf compare` reads what it wrote.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "data/bpe_model.h"
#include "data/token_dataset.h"
#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/bleu.h"
#include "train/paired_bootstrap.h"
#include "train/sentence_scores.h"
#include "train/trainer.h"

using agf::train::PairedMetric;
using agf::train::SentenceScore;

namespace {

// n sentences of 10 target tokens; sentence i has correct(i) right.
std::vector<SentenceScore> scores(int n, int (*correct)(int)) {
  std::vector<SentenceScore> sentences(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    sentences[i].index = i;
    sentences[i].source_tokens = 5 + i % 50;
    sentences[i].target_tokens = 10;
    sentences[i].correct = correct(i);
  }
  return sentences;
}

}  // namespace

TEST_CASE("corpus BLEU is the score of its sentences' summed statistics", "[train][bleu]") {
  const std::vector<std::string> hypotheses = {"the cat sat on the mat", "a dog , running", "", "hello world again"};
  const std::vector<std::string> references = {"the cat is on the mat", "a dog was running .", "nothing here",
                                               "hello again world"};
  agf::train::BleuStatistics total;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    total += agf::train::sentence_bleu_statistics(hypotheses[i], {references[i]});
  }
  CHECK(agf::train::bleu_score(total).to_string() == agf::train::corpus_bleu(hypotheses, {references}).to_string());
  CHECK(agf::train::bleu_score(total).score == agf::train::corpus_bleu(hypotheses, {references}).score);
}

TEST_CASE("the paired bootstrap: none against itself, a clear one, and its mirror", "[train][bootstrap]") {
  const auto a = scores(200, [](int i) { return 4 + i % 3; });
  const auto same = agf::train::paired_bootstrap(a, a, PairedMetric::token_accuracy, 500);
  CHECK(same.difference == 0);
  CHECK(same.low == 0);
  CHECK(same.high == 0);
  CHECK(same.p_value == 1);
  CHECK(same.verdict() == "not distinguishable");

  const auto b = scores(200, [](int i) { return 6 + i % 3; });  // two more right on every sentence
  const auto better = agf::train::paired_bootstrap(a, b, PairedMetric::token_accuracy, 500);
  CHECK(better.a == Approx(100.0 * (4 + 5 + 6) / 30).epsilon(0.01));
  CHECK(better.difference == Approx(20.0));
  CHECK(better.low > 0);
  CHECK(better.p_value == Approx(1.0 / 501));
  CHECK(better.verdict() == "b better");
  const auto mirror = agf::train::paired_bootstrap(b, a, PairedMetric::token_accuracy, 500);
  CHECK(mirror.difference == -better.difference);
  CHECK(mirror.low == Approx(-better.high));
  CHECK(mirror.high == Approx(-better.low));
  CHECK(mirror.low_90 == Approx(-better.high_90));
  CHECK(mirror.verdict() == "a better");

  // Better on half the sentences and worse by as much on the other half: no difference at all.
  const auto mixed = scores(200, [](int i) { return i % 2 == 0 ? 6 : 2; });
  const auto base = scores(200, [](int) { return 4; });
  const auto level = agf::train::paired_bootstrap(base, mixed, PairedMetric::token_accuracy, 500);
  CHECK(level.difference == 0);
  CHECK(level.p_value == 1);
  CHECK(level.low < 0);
  CHECK(level.high > 0);
  // The 90 % interval (equivalence tests) lies strictly inside the 95 % one, around the difference.
  CHECK(level.low < level.low_90);
  CHECK(level.low_90 < 0);
  CHECK(level.high_90 > 0);
  CHECK(level.high_90 < level.high);
  CHECK(level.verdict() == "not distinguishable");
  // The same seed, the same draws.
  const auto again = agf::train::paired_bootstrap(base, mixed, PairedMetric::token_accuracy, 500);
  CHECK(again.low == level.low);
  CHECK(again.high == level.high);
}

TEST_CASE("token metrics: accuracy in %, and its log-odds, finite at none or all right", "[train][bootstrap]") {
  using agf::train::token_metric;
  CHECK(token_metric(PairedMetric::token_accuracy, 3, 4) == 75.0);
  CHECK(token_metric(PairedMetric::token_accuracy, 0, 0) == 0.0);
  CHECK(token_metric(PairedMetric::token_log_odds, 3, 4) == Approx(std::log(3.0)));
  CHECK(token_metric(PairedMetric::token_log_odds, 5, 10) == 0.0);
  CHECK(token_metric(PairedMetric::token_log_odds, 1, 4) == Approx(-std::log(3.0)));
  CHECK(token_metric(PairedMetric::token_log_odds, 0, 4) == Approx(std::log(0.5 / 4.5)));
  CHECK(token_metric(PairedMetric::token_log_odds, 4, 4) == Approx(std::log(4.5 / 0.5)));
  CHECK_THROWS_WITH(token_metric(PairedMetric::bleu, 1, 2), Catch::Contains("BLEU is not a token metric"));
  // The bootstrap on the log-odds scale: 60 % against 40 % right is log(1.5) - log(2/3) = 2 log 1.5 apart.
  const auto a = scores(100, [](int) { return 4; }), b = scores(100, [](int) { return 6; });
  const auto odds = agf::train::paired_bootstrap(a, b, PairedMetric::token_log_odds, 200);
  CHECK(odds.difference == Approx(2 * std::log(1.5)));
  CHECK(odds.verdict() == "b better");
}

TEST_CASE("the change of a paired difference from near sentences to far ones", "[train][bootstrap]") {
  const auto base = scores(100, [](int) { return 4; });
  const auto ahead = scores(100, [](int) { return 6; });                     // +20 points on every sentence
  const auto mixed = scores(100, [](int i) { return i % 2 == 0 ? 6 : 2; });  // ±20, level on the whole
  // The same lead near and far: no change, and no resample finds one.
  const auto same = agf::train::paired_bootstrap_change(base, ahead, base, ahead, PairedMetric::token_accuracy, 500);
  CHECK(same.a == 0);  // a's accuracy far minus near
  CHECK(same.difference == 0);
  CHECK(same.low == 0);
  CHECK(same.high == 0);
  CHECK(same.p_value == 1);
  // Level near (on average), 20 points ahead far: the lead grows by 20, and resampling the near sentences
  // alone spreads the interval around it.
  const auto grows = agf::train::paired_bootstrap_change(base, mixed, base, ahead, PairedMetric::token_accuracy, 500);
  CHECK(grows.difference == Approx(20.0));
  CHECK(grows.b == Approx(20.0));
  CHECK(grows.low > 0);
  CHECK(grows.low < 20);
  CHECK(grows.high > 20);
  CHECK(grows.p_value == Approx(1.0 / 501));
  CHECK(grows.verdict() == "b better");
  // Ahead near and level far: it shrinks, by the mirror image.
  const auto shrinks = agf::train::paired_bootstrap_change(base, ahead, base, mixed, PairedMetric::token_accuracy, 500);
  CHECK(shrinks.difference == Approx(-20.0));
  CHECK(shrinks.verdict() == "a better");
  // Each pair of sets must be the same sentences.
  CHECK_THROWS_WITH(agf::train::paired_bootstrap_change(base, ahead, base, scores(99, [](int) { return 6; }),
                                                        PairedMetric::token_accuracy),
                    Catch::Contains("a scores 100 sentences and b 99"));
}

TEST_CASE("the paired bootstrap refuses sets that are not the same sentences", "[train][bootstrap]") {
  const auto a = scores(10, [](int) { return 5; });
  auto shifted = a;
  shifted[3].index = 7;
  CHECK_THROWS_WITH(agf::train::paired_bootstrap(a, shifted, PairedMetric::token_accuracy),
                    Catch::Contains("sentence 3 is pair 3"));
  CHECK_THROWS_WITH(agf::train::paired_bootstrap(a, scores(9, [](int) { return 5; }), PairedMetric::token_accuracy),
                    Catch::Contains("a scores 10 sentences and b 9"));
  auto translated_a = a, translated_b = a;
  for (auto* side : {&translated_a, &translated_b}) {
    for (auto& s : *side) {
      s.translated = true;
      s.reference = "ref " + std::to_string(s.index);
    }
  }
  translated_b[4].reference = "another";
  CHECK_THROWS_WITH(agf::train::paired_bootstrap(translated_a, translated_b, PairedMetric::bleu),
                    Catch::Contains("pair 4 has another reference on each side"));
  CHECK_THROWS_WITH(agf::train::paired_bootstrap(a, a, PairedMetric::bleu),
                    Catch::Contains("BLEU needs every sentence translated"));
}

TEST_CASE("a sentence file keeps a translation with invalid UTF-8, as U+FFFD, and its counts", "[train][bootstrap]") {
  agf::test::ScratchDir scratch;
  auto sentences = scores(2, [](int) { return 3; });
  for (auto& s : sentences) s.translated = true, s.reference = "Haus", s.bleu.totals[0] = 1;
  sentences[1].hypothesis = "Stra\xc3";  // a model that stopped inside "ß"
  const std::string path = scratch.file("s.jsonl.xz");
  agf::train::write_sentence_scores(path, sentences);
  const auto read = agf::train::read_sentence_scores(path);
  REQUIRE(read.size() == 2);
  CHECK(read[1].hypothesis == "Stra\xef\xbf\xbd");
  CHECK(read[1].correct == 3);
  CHECK(read[1].bleu.totals[0] == 1);
}

TEST_CASE("token accuracy by source length adds up per bucket", "[train][bootstrap]") {
  auto sentences = scores(4, [](int i) { return i; });
  sentences[0].source_tokens = 0;
  sentences[1].source_tokens = 40;
  sentences[2].source_tokens = 41;
  sentences[3].source_tokens = 101;
  const auto buckets = agf::train::length_buckets(sentences, {40, 60, 100});
  REQUIRE(buckets.size() == 4);
  CHECK(buckets[0].pairs == 2);  // 0 and 40
  CHECK(buckets[0].source_tokens == 40);
  CHECK(buckets[0].correct == 1);
  CHECK(buckets[0].token_accuracy() == Approx(5.0));
  CHECK(buckets[1].low == 41);
  CHECK(buckets[1].high == 60);
  CHECK(buckets[1].pairs == 1);
  CHECK(buckets[2].pairs == 0);
  CHECK(buckets[2].token_accuracy() == 0);
  CHECK(buckets[3].high == -1);
  CHECK(buckets[3].pairs == 1);
  CHECK(buckets[3].source_tokens == 101);
  CHECK_THROWS_WITH(agf::train::length_buckets(sentences, {60, 40}), Catch::Contains("ascending"));
}

TEST_CASE("agf eval --sentences adds up to its corpus figures, and agf compare reads two such files",
          "[train][bootstrap][cli]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const auto options = agf::test::tiny_training(data, scratch.file("run"), 3, 3);
  agf::train::train(options);
  const std::string checkpoint = options.out_dir + "/checkpoints/best.safetensors";
  const std::string file = scratch.file("sentences.jsonl");
  const auto evaluated = run_agf("eval --checkpoint " + checkpoint + " --data " + data +
                                 " --bleu-sentences 5 --length-buckets 5,10 --sentences " + file);
  INFO(evaluated.output);
  REQUIRE(evaluated.status == 0);
  CHECK_THAT(evaluated.output, Catch::Contains("token accuracy by source length") && Catch::Contains("> 10"));
  const auto sentences = agf::train::read_sentence_scores(file);
  CHECK(sentences.size() == 20);  // the fixture's 20 pairs
  int64_t correct = 0, tokens = 0, translated = 0;
  for (const auto& s : sentences) {
    correct += s.correct;
    tokens += s.target_tokens;
    translated += s.translated;
  }
  CHECK(translated == 5);
  // Each pair's own counts: its reference's tokens and eos, and its source's tokens (a wrong assignment of
  // batch positions to pairs would move tokens between pairs and keep the sums).
  const auto bpe = agf::data::BpeModel::load(data + "/bpe.json");
  const auto valid = agf::data::TokenDataset::open(data + "/valid.bin", bpe.hash());
  for (const auto& s : sentences) {
    INFO("pair " << s.index);
    CHECK(s.target_tokens == static_cast<int64_t>(valid.target(static_cast<std::size_t>(s.index)).size()) + 1);
    CHECK(s.source_tokens == static_cast<int64_t>(valid.source(static_cast<std::size_t>(s.index)).size()));
  }
  CHECK_THAT(evaluated.output, Catch::Contains(fmt::format("{} target tokens", tokens)) &&
                                   Catch::Contains(fmt::format("token accuracy {:.2f}%", 100.0 * correct / tokens)));

  const auto compared = run_agf("compare " + file + " " + file + " --resamples 200");
  INFO(compared.output);
  CHECK(compared.status == 0);
  CHECK_THAT(compared.output, Catch::Contains("not distinguishable") && Catch::Contains("BLEU (5 translated pairs)"));

  std::ofstream(scratch.file("broken.jsonl")) << "{\"index\": 0}\n";
  const auto broken = run_agf("compare " + file + " " + scratch.file("broken.jsonl"));
  CHECK(broken.status == 1);
  CHECK_THAT(broken.output, Catch::Contains("broken.jsonl:1"));
}
