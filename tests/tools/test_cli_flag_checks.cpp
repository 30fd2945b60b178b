// Numeric flag values: nan, ±inf, negatives in unsigned flags and sizes that would exhaust memory are
// refused before anything runs, with exit status 2 and the flag named (tools/agf/flag_checks.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"

TEST_CASE("non-finite, negative and oversized flag values exit 2 naming the flag", "[cli][errors]") {
  agf::test::ScratchDir scratch;
  const std::string data = scratch.path().string();  // never read: the flags are refused first
  const std::string fixture = std::string(AGF_SOURCE_DIR) + "/tests/fixtures/tiny-en-de";
  const std::string train = "train --data " + data + " --out " + scratch.file("run") + " ";
  struct Refusal {
    std::string arguments, flag, expected;
  };
  const std::vector<Refusal> refusals = {
      {train + "--lr nan", "--lr", "a positive number, got 'nan'"},
      {train + "--lr inf", "--lr", "a positive number, got 'inf'"},
      {train + "--k nan", "--k", "a finite number, got 'nan'"},
      {train + "--k inf", "--k", "a finite number, got 'inf'"},
      {train + "--k -inf", "--k", "a finite number, got '-inf'"},
      {train + "--clip-norm nan", "--clip-norm", "a number >= 0, got 'nan'"},
      {train + "--max-minutes nan", "--max-minutes", "a number >= 0, got 'nan'"},
      {train + "--label-smoothing nan", "--label-smoothing", "a number from 0 to 1, got 'nan'"},
      {train + "--dropout nan", "--dropout", "got 'nan'"},
      {train + "--max-minutes -1", "--max-minutes", "a number >= 0, got '-1'"},
      {"bpe learn --input " + fixture + "/train.en --vocab-size -5 --output " + scratch.file("bpe.json"), "--vocab-size",
       "a whole number >= 0, got '-5'"},
      {"bpe learn --input " + fixture + "/train.en --character-coverage nan --output " + scratch.file("bpe.json"),
       "--character-coverage", "got 'nan'"},
      {"translate --checkpoint " + fixture + "/train.en --beam 100000", "--beam", "a number from 1 to 256, got '100000'"},
      {"translate --checkpoint " + fixture + "/train.en --batch 0", "--batch", "a positive number, got '0'"},
      {"translate --checkpoint " + fixture + "/train.en --length-penalty nan", "--length-penalty", "got 'nan'"},
      {"eval --checkpoint " + fixture + "/train.en --data " + data + " --beam 100000", "--beam", "from 1 to 256"},
      {"inspect --checkpoint " + fixture + "/train.en --out " + scratch.file("a.svg") + " --max-distance 2000000000",
       "--max-distance", "a number from 1 to 100000, got '2000000000'"},
  };
  for (const auto& refusal : refusals) {
    const auto result = run_agf(refusal.arguments);
    INFO(refusal.arguments << "\n" << result.output);
    CHECK(result.status == 2);
    CHECK_THAT(result.output, Catch::Contains(refusal.flag + ": expected " ) && Catch::Contains(refusal.expected));
    // CLI11's own range checks printed DBL_MAX in full: no message is that long any more.
    CHECK(result.output.size() < 300);
  }
}
