#include <catch2/catch.hpp>

#include "tests/tools/cli_runner.h"

TEST_CASE("agf gradcheck --op attention --pos SCHEME [--pcmv] [--causal] checks one configuration",
          "[cli][attention]") {
  const CommandResult one = run_agf("gradcheck --op attention --pos agf-m --pcmv --causal");
  CHECK(one.status == 0);
  CHECK_THAT(one.output, Catch::Contains("attention:agf-m+pcmv+causal") && Catch::Contains("ok") &&
                             Catch::Contains("1 checked, 0 failed"));
  const CommandResult rope = run_agf("gradcheck --op attention --pos rope");
  CHECK(rope.status == 0);
  CHECK_THAT(rope.output, Catch::Contains("attention:rope ") && Catch::Contains("1 checked, 0 failed"));
  const CommandResult every = run_agf("gradcheck --op attention");
  CHECK(every.status == 0);
  CHECK_THAT(every.output, Catch::Contains("attention:agf-f+pcmv+causal") && Catch::Contains("attention:t5+tq3tk5") &&
                               Catch::Contains(", 0 failed"));
  const CommandResult list = run_agf("gradcheck --list");
  CHECK_THAT(list.output,
             Catch::Contains("attention:kerple-power+causal") && Catch::Contains("attention:edge:masked-row"));
}

TEST_CASE("agf gradcheck --explain prints the backward step by step with finite differences", "[cli][attention]") {
  const CommandResult explain = run_agf("gradcheck --op attention --pos agf-m --pcmv --explain");
  CHECK(explain.status == 0);
  // T = 5 tokens with L = 3 table entries (the clamped index the doc singles out) and dropout on.
  for (const char* name :
       {"T = 5 tokens", "L = 3", "dropout p = 0.2", "C  —",         "s  —",      "a  —",        "mask  —",
        "a'  —",        "ga  —", "gs  —",           "gC_score",     "gC_value",  "gC  —",       "gT  —",
        "gLC1",         "gG[0]", "grho[1]",         "g_k_exponent", "glc2[1,2]", "finite diff."}) {
    CHECK_THAT(explain.output, Catch::Contains(name));
  }
  CHECK_THAT(explain.output, Catch::EndsWith("ok\n"));
  const CommandResult full = run_agf("gradcheck --op attention --pos agf-f --causal --explain");
  CHECK(full.status == 0);
  CHECK_THAT(full.output, Catch::Contains("glc3[0,1,1]") && !Catch::Contains("gC_value"));
}

TEST_CASE("agf gradcheck rejects attention flags that do not fit", "[cli][attention][errors]") {
  const CommandResult pcmv = run_agf("gradcheck --op attention --pos rope --pcmv");
  CHECK(pcmv.status != 0);
  CHECK_THAT(pcmv.output, Catch::Contains("coefficient schemes"));
  const CommandResult unknown = run_agf("gradcheck --op attention --pos agf-q");
  CHECK(unknown.status != 0);
  CHECK_THAT(unknown.output, Catch::Contains("unknown positional scheme 'agf-q'"));
  const CommandResult stray = run_agf("gradcheck --op softmax --pos agf-m");
  CHECK(stray.status != 0);
  CHECK_THAT(stray.output, Catch::Contains("go with --op attention"));
  const CommandResult explain = run_agf("gradcheck --op attention --pos t5 --explain");
  CHECK(explain.status != 0);
  CHECK_THAT(explain.output, Catch::Contains("agf-b, agf-m or agf-f"));
}
