// The LibreOffice help corpus builder on a tiny fixture (tests/fixtures/libreoffice-help: two pages a
// language plus one page without a German twin), and the HTML text extraction it relies on.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "data/html_text.h"
#include "data/libreoffice_help_corpus.h"
#include "data/text_file.h"
#include "tests/data/scratch_dir.h"

using namespace agf::data;
using agf::test::ScratchDir;

namespace {
const std::string fixture = std::string(AGF_SOURCE_DIR) + "/tests/fixtures/libreoffice-help";

std::multiset<std::string> pairs_of(const ScratchDir& dir, const std::string& split) {
  const auto english = read_lines(dir.file(split + ".en"));
  const auto german = read_lines(dir.file(split + ".de"));
  REQUIRE(english.size() == german.size());
  std::multiset<std::string> pairs;
  for (std::size_t i = 0; i < english.size(); ++i) pairs.insert(english[i] + " ||| " + german[i]);
  return pairs;
}
}  // namespace

TEST_CASE("HTML text: ids, hidden alternatives, entities, whitespace", "[data][corpus]") {
  const std::string html =
      "<p id=\"par_id1\">A <span hidden=\"true\" class=\"MAC\">mac</span><span hidden=\"true\">default</span>"
      " &lt;x&gt;<br/>y<!-- <b>no</b> --></p><p id=\"skip\">z</p><h2 id='hd_id2'>\n  two\t words </h2>";
  auto wanted = [](std::string_view id) { return id.rfind("par_id", 0) == 0 || id.rfind("hd_id", 0) == 0; };
  const auto items = extract_id_texts(html, wanted);
  REQUIRE(items.size() == 2);
  CHECK(items[0].id == "par_id1");
  CHECK(items[0].text == "A default <x> y");
  CHECK(items[1].id == "hd_id2");
  CHECK(items[1].text == "two words");
  // unclosed elements and stray brackets do not crash and still yield text
  const auto broken = extract_id_texts("<p id=\"par_id9\">a < b <i>c", wanted);
  REQUIRE(broken.size() == 1);
  CHECK(broken[0].text == "a < b c");
}

TEST_CASE("corpus builder pairs, filters, splits and reproduces the fixture", "[data][corpus]") {
  ScratchDir dir;
  LibreOfficeHelpOptions options;
  options.from = fixture;
  options.out = dir.path().string();
  options.valid_size = 1;
  options.test_size = 1;
  const LibreOfficeHelpReport report = build_libreoffice_help(options);
  CHECK(report.pages == 2);  // only_english.html has no twin
  CHECK(report.pairs_found == 10);
  CHECK(report.dropped_empty == 1);
  CHECK(report.dropped_identical == 1);
  CHECK(report.dropped_duplicate == 1);
  CHECK(report.pairs == 7);
  CHECK(report.train == 5);
  CHECK(report.valid == 1);
  CHECK(report.test == 1);

  std::multiset<std::string> all;
  for (const char* split : {"train", "valid", "test"}) {
    for (const auto& pair : pairs_of(dir, split)) all.insert(pair);
  }
  const std::multiset<std::string> expected = {
      "Open a document ||| Ein Dokument öffnen",
      "Choose Tools - Options - Load/Save. ||| Wählen Sie Extras - Optionen - Laden/Speichern.",
      "Fish & chips <b> éé next line ||| Fisch & Pommes <b> éé nächste Zeile",
      "Save the file. ||| Speichern Sie die Datei.",
      "Click here to continue. ||| Klicken Sie hier, um fortzufahren.",
      "The cat sleeps. ||| Die Katze schläft.",
      "The dog barks. ||| Der Hund bellt.",
  };
  CHECK(all == expected);  // every pair in exactly one split
  CHECK(read_file(dir.file("SOURCE")).find("seed 1") != std::string::npos);
  CHECK(read_file(dir.file("NOTICE")).find("Mozilla Public License") != std::string::npos);

  // Same inputs and seed: the same bytes (here through the CLI, compressed).
  ScratchDir first, second;
  for (const ScratchDir* out : {&first, &second}) {
    const std::string command = std::string(AGF_BINARY) + " corpus build libreoffice-help --from '" + fixture +
                                "' --out '" + out->path().string() + "' --valid-size 1 --test-size 1 --xz 2>/dev/null";
    REQUIRE(std::system(command.c_str()) == 0);
  }
  for (const char* name : {"train.en.xz", "train.de.xz", "valid.en.xz", "test.de.xz", "SOURCE"}) {
    CHECK(read_file(first.file(name)) == read_file(second.file(name)));
  }
  CHECK(read_lines(first.file("train.en.xz")).size() == 5);

  // another seed gives another split of the same pairs
  options.seed = 7;
  ScratchDir other;
  options.out = other.path().string();
  build_libreoffice_help(options);
  std::multiset<std::string> all_other;
  for (const char* split : {"train", "valid", "test"}) {
    for (const auto& pair : pairs_of(other, split)) all_other.insert(pair);
  }
  CHECK(all_other == expected);
}

TEST_CASE("corpus builder refuses a tree without the help pages", "[data][corpus]") {
  ScratchDir dir;
  LibreOfficeHelpOptions options;
  options.from = dir.path().string();
  options.out = dir.file("out");
  CHECK_THROWS_WITH(build_libreoffice_help(options), Catch::Contains("en-US"));
  options.from = fixture;
  options.valid_size = 5;
  options.test_size = 5;
  CHECK_THROWS_WITH(build_libreoffice_help(options), Catch::Contains("not enough"));
}
