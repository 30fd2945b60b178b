// Readers of parallel text (plain, TSV, WMT .sgm), xz transparency, and their errors on bad input.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "data/entities.h"
#include "data/parallel_corpus.h"
#include "data/text_file.h"
#include "tests/data/scratch_dir.h"

using namespace agf::data;
using agf::test::ScratchDir;

TEST_CASE("plain reader pairs lines, reads xz, drops a trailing CR", "[data][readers]") {
  ScratchDir dir;
  const auto source = dir.write("a.en", "Hello\r\nGood morning\n\n");
  const auto target = dir.write("a.de.xz", "Hallo\nGuten Morgen\n\n", true);
  ReadReport report;
  const auto corpus = read_plain(source, target, {}, &report);
  REQUIRE(corpus.size() == 3);
  CHECK(corpus.source[0] == "Hello");
  CHECK(corpus.target[1] == "Guten Morgen");
  CHECK(corpus.source[2].empty());  // empty pairs are read; prepare drops them and counts them
  CHECK(report.pairs == 3);
  CHECK(is_xz(xz_compress("x")));
  CHECK(read_file(target) == "Hallo\nGuten Morgen\n\n");
}

TEST_CASE("plain reader: a line-count mismatch names both files and both counts", "[data][readers]") {
  ScratchDir dir;
  const auto source = dir.write("b.en", "one\ntwo\nthree\n");
  const auto target = dir.write("b.de", "eins\nzwei\n");
  CHECK_THROWS_WITH(read_plain(source, target, {}), Catch::Contains("b.en") && Catch::Contains("3 lines") &&
                                                        Catch::Contains("b.de") && Catch::Contains("2 lines"));
}

TEST_CASE("readers: invalid UTF-8 is an error naming file and line, or skipped and counted", "[data][readers]") {
  ScratchDir dir;
  const auto source = dir.write("c.en", "fine\nbad \xC3\x28 here\nfine too\n");
  const auto target = dir.write("c.de", "gut\nschlecht\nauch gut\n");
  CHECK_THROWS_WITH(read_plain(source, target, {}), Catch::Contains("c.en:2") && Catch::Contains("invalid UTF-8"));
  ReadOptions skip;
  skip.skip_invalid = true;
  ReadReport report;
  const auto corpus = read_plain(source, target, skip, &report);
  CHECK(corpus.size() == 2);
  CHECK(report.invalid_skipped == 1);
  CHECK(corpus.target[1] == "auch gut");
}

TEST_CASE("TSV reader splits two columns and rejects malformed lines", "[data][readers]") {
  ScratchDir dir;
  const auto good = dir.write("good.tsv", "Hello\tHallo\n\tleer\n");
  const auto corpus = read_tsv(good, {});
  REQUIRE(corpus.size() == 2);
  CHECK(corpus.source[0] == "Hello");
  CHECK(corpus.target[0] == "Hallo");
  CHECK(corpus.source[1].empty());
  const auto no_tab = dir.write("no_tab.tsv", "Hello\tHallo\nno tab here\n");
  CHECK_THROWS_WITH(read_tsv(no_tab, {}), Catch::Contains("no_tab.tsv:2") && Catch::Contains("no tab"));
  const auto three = dir.write("three.tsv", "a\tb\tc\n");
  CHECK_THROWS_WITH(read_tsv(three, {}), Catch::Contains("three.tsv:1") && Catch::Contains("more than one tab"));
  const auto bad = dir.write("bad.tsv", "ok\tok\n\xFF\tx\n");
  CHECK_THROWS_WITH(read_tsv(bad, {}), Catch::Contains("bad.tsv:2"));
}

TEST_CASE("WMT .sgm reader takes segments in order and decodes entities", "[data][readers]") {
  ScratchDir dir;
  const auto source = dir.write("newstest.en.sgm", "<srcset setid=\"newstest2017\" srclang=\"any\">\n"
                                                   "<doc sysid=\"ref\" docid=\"1\" genre=\"news\" origlang=\"en\">\n"
                                                   "<p>\n"
                                                   "<seg id=\"1\">Fish &amp; chips cost &#163;5.</seg>\n"
                                                   "<seg id=\"2\"> It&apos;s &quot;fine&quot;. </seg>\n"
                                                   "</p>\n</doc>\n</srcset>\n");
  const auto target = dir.write("newstest.de.sgm", "<refset setid=\"newstest2017\" srclang=\"any\" trglang=\"de\">\n"
                                                   "<doc sysid=\"ref\" docid=\"1\" genre=\"news\" origlang=\"en\">\n"
                                                   "<seg id=\"1\">Fisch &amp; Pommes kosten 5 &#x00A3;.</seg>\n"
                                                   "<seg id=\"2\">Es ist &lt;gut&gt;.</seg>\n"
                                                   "</doc>\n</refset>\n");
  CHECK(guess_format(source) == CorpusFormat::sgm);
  const auto corpus = read_sgm(source, target, {});
  REQUIRE(corpus.size() == 2);
  CHECK(corpus.source[0] == "Fish & chips cost £5.");
  CHECK(corpus.source[1] == "It's \"fine\".");
  CHECK(corpus.target[0] == "Fisch & Pommes kosten 5 £.");
  CHECK(corpus.target[1] == "Es ist <gut>.");

  const auto short_target = dir.write("short.de.sgm", "<seg id=\"1\">Eins</seg>\n");
  CHECK_THROWS_WITH(read_sgm(source, short_target, {}),
                    Catch::Contains("2 segments") && Catch::Contains("1 segments") && Catch::Contains("short.de.sgm"));
  const auto broken = dir.write("broken.sgm", "<seg id=\"1\">no end\n");
  CHECK_THROWS_WITH(read_sgm_segments(broken), Catch::Contains("broken.sgm:1"));
  const auto foreign = dir.write("foreign.sgm", "just some text\n");
  CHECK_THROWS_WITH(read_sgm_segments(foreign), Catch::Contains("no <seg>"));
}

TEST_CASE("entities: known ones decode, others stay literal", "[data][readers]") {
  CHECK(decode_entities("R&D &amp; &#x1F600; &#0; &bogus; &#xD800; &") == "R&D & 😀 &#0; &bogus; &#xD800; &");
}

TEST_CASE("readers: missing files and corrupt xz are clear errors", "[data][readers]") {
  ScratchDir dir;
  CHECK_THROWS_WITH(read_lines(dir.file("missing.txt")), Catch::Contains("missing.txt"));
  std::string compressed = xz_compress("some text that will be cut short\n");
  const auto cut = dir.write("cut.xz", compressed.substr(0, compressed.size() / 2));
  CHECK_THROWS_WITH(read_lines(cut), Catch::Contains("cut.xz") && Catch::Contains("corrupt or truncated"));
}
