// `agf bpe learn|encode|decode` end to end through the built program, and its errors on bad input.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "data/text_file.h"
#include "tests/data/scratch_dir.h"

using agf::data::read_file;
using agf::test::ScratchDir;

namespace {
int run(const std::string& arguments) {
  const int status = std::system((std::string(AGF_BINARY) + " " + arguments).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

TEST_CASE("agf bpe: learn, encode, decode round trip through the CLI", "[data][bpe][cli]") {
  ScratchDir dir;
  const std::string text =
      "The cat sat on the mat.\n\n  two leading spaces\ttab\nDie Katze saß auf der Matte. 😀\nthe end";
  dir.write("corpus.txt", text + "\nthe the the cat cat\n");
  const std::string model = dir.file("bpe.json");
  REQUIRE(run("bpe learn --input " + dir.file("corpus.txt") + " --vocab-size 300 --output " + model + " 2>/dev/null") ==
          0);
  dir.write("input.txt", text);
  for (const std::string ids : {"", " --ids"}) {
    REQUIRE(run("bpe encode --model " + model + ids + " < " + dir.file("input.txt") + " > " + dir.file("tokens.txt")) ==
            0);
    REQUIRE(run("bpe decode --model " + model + ids + " < " + dir.file("tokens.txt") + " > " + dir.file("back.txt")) ==
            0);
    CHECK(read_file(dir.file("back.txt")) == text + "\n");  // one line out per line in, each ending in '\n'
  }
  CHECK(read_file(dir.file("tokens.txt")).find("\n\n") != std::string::npos);  // the empty line stays a line
}

TEST_CASE("agf bpe: bad input exits with status 1 and says where", "[data][bpe][cli]") {
  ScratchDir dir;
  dir.write("corpus.txt", "good line\nbad \xC3\x28 line\n");
  const std::string model = dir.file("bpe.json");
  const std::string errors = dir.file("err.txt");
  CHECK(run("bpe learn --input " + dir.file("corpus.txt") + " --vocab-size 300 --output " + model + " 2> " + errors) ==
        1);
  CHECK(read_file(errors).find("corpus.txt:2: invalid UTF-8") != std::string::npos);
  REQUIRE(run("bpe learn --input " + dir.file("corpus.txt") + " --skip-invalid --vocab-size 300 --output " + model +
              " 2> " + errors) == 0);
  CHECK(read_file(errors).find("1 with invalid UTF-8 skipped") != std::string::npos);
  CHECK(run("bpe encode --model " + model + " < " + dir.file("corpus.txt") + " > /dev/null 2> " + errors) == 1);
  CHECK(read_file(errors).find("<stdin>:2: invalid UTF-8") != std::string::npos);
  dir.write("ids.txt", "5 6 999999\n");
  CHECK(run("bpe decode --ids --model " + model + " < " + dir.file("ids.txt") + " > /dev/null 2> " + errors) == 1);
  CHECK(read_file(errors).find("<stdin>:1: '999999' is not a token id") != std::string::npos);
  dir.write("pieces.txt", "g o ▁ nosuchtoken\n");
  CHECK(run("bpe decode --model " + model + " < " + dir.file("pieces.txt") + " > /dev/null 2> " + errors) == 1);
  CHECK(read_file(errors).find("'nosuchtoken' is not a token") != std::string::npos);
  dir.write("not_a_model.json", "[1, 2, 3]");
  CHECK(run("bpe encode --model " + dir.file("not_a_model.json") + " < /dev/null 2> " + errors) == 1);
  CHECK(read_file(errors).find("not_a_model.json") != std::string::npos);
  CHECK(run("bpe learn --input " + dir.file("corpus.txt") + " --skip-invalid --vocab-size 10 --output " + model +
            " 2> " + errors) == 1);
  CHECK(read_file(errors).find("too small") != std::string::npos);
}
