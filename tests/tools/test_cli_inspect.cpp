#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"

TEST_CASE("agf inspect draws one panel per module and direction, fits each curve, and refuses schemes without a "
          "coefficient",
          "[cli][inspect]") {
  agf::test::ScratchDir scratch;
  const std::string fixture = std::string(AGF_SOURCE_DIR) + "/tests/fixtures/tiny-en-de";
  const std::string bpe = scratch.file("bpe.json");
  REQUIRE(run_agf("bpe learn --input " + fixture + "/train.en --vocab-size 300 --output " + bpe).status == 0);
  const std::string checkpoint = scratch.file("agf.safetensors"), svg = scratch.file("field.svg");
  REQUIRE(run_agf("init --preset tiny --pos agf-f --pcmv --vocab " + bpe + " --out " + checkpoint).status == 0);
  const auto inspected = run_agf("inspect --checkpoint " + checkpoint + " --out " + svg + " --max-distance 50");
  REQUIRE(inspected.status == 0);
  // tiny: 1 encoder layer (2 directions) + 1 decoder layer (1 direction) = 3 panels of 2 heads + the initial curve
  CHECK_THAT(inspected.output, Catch::Contains("3 panels (2 heads each)"));
  std::ifstream in(svg);
  const std::string content((std::istreambuf_iterator<char>(in)), {});
  CHECK(content.rfind("<svg", 0) == 0);
  std::size_t polylines = 0;
  for (std::size_t at = content.find("<polyline"); at != std::string::npos; at = content.find("<polyline", at + 1))
    ++polylines;
  CHECK(polylines == 3 * 3);
  CHECK_THAT(content, Catch::Contains("key after query"));
  // At initialisation (G = 1, rho = 1/24, lc2 = lc3 = 1) every head lies exactly on the initial curve
  // 1/(1 + D/24)^2: in each panel the heads' polylines and the dashed reference have the same points.
  std::vector<std::string> points;
  for (std::size_t at = content.find("points=\""); at != std::string::npos; at = content.find("points=\"", at + 1)) {
    const std::size_t begin = at + 8;
    points.push_back(content.substr(begin, content.find('"', begin) - begin));
  }
  REQUIRE(points.size() == 9);
  for (std::size_t panel = 0; panel < 3; ++panel) {
    CHECK(points[3 * panel] == points[3 * panel + 2]);
    CHECK(points[3 * panel + 1] == points[3 * panel + 2]);
  }
  // ... so every curve is fitted as the power law it starts as: G = 1, r = 24, k = 2, R² = 1.
  CHECK_THAT(inspected.output, Catch::Contains("Fits of |C(D)| for D = 1..50"));
  CHECK_THAT(inspected.output, Catch::Contains("| encoder.layers.0 | 1 | 1 | 1 | 24 | 2 | 1.0000 |"));
  CHECK_THAT(inspected.output, Catch::Contains("6 of 6 curves decay as a power law"));
  const auto short_fit = run_agf("inspect --checkpoint " + checkpoint + " --out " + svg +
                                 " --max-distance 50 --fit-max-distance 60");
  CHECK(short_fit.status == 1);
  CHECK_THAT(short_fit.output, Catch::Contains("--fit-max-distance 60 must be from 3 to --max-distance 50"));
  // ALiBi-mult's fixed coefficient exp(−slope·D) is an exponential, which the fit tells apart.
  const std::string alibi_mult = scratch.file("alibi-mult.safetensors");
  REQUIRE(run_agf("init --preset tiny --pos alibi-mult --vocab " + bpe + " --out " + alibi_mult).status == 0);
  const auto exponential = run_agf("inspect --checkpoint " + alibi_mult + " --out " + svg + " --fit-max-distance 40");
  REQUIRE(exponential.status == 0);
  CHECK_THAT(exponential.output, Catch::Contains("0 of 6 curves decay as a power law"));
  CHECK_THAT(exponential.output, Catch::Contains("| exponential fits as well |"));
  // An --out that cannot be written is an error, not "written".
  const auto unwritable = run_agf("inspect --checkpoint " + checkpoint + " --out " +
                                  scratch.file("no-such-folder/field.svg"));
  CHECK(unwritable.status == 1);
  CHECK_THAT(unwritable.output, Catch::Contains("cannot create '" + scratch.file("no-such-folder/field.svg") + "'"));
  CHECK_THAT(unwritable.output, !Catch::Contains("written"));
  const std::string rope = scratch.file("rope.safetensors");
  REQUIRE(run_agf("init --preset tiny --pos rope --vocab " + bpe + " --out " + rope).status == 0);
  const auto refused = run_agf("inspect --checkpoint " + rope + " --out " + svg);
  CHECK(refused.status == 1);
  CHECK_THAT(refused.output, Catch::Contains("uses 'rope'"));
}
