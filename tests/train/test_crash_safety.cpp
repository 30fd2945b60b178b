// Crash safety: files that a kill or a full disk never leaves half-written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/data/scratch_dir.h"
#include "train/atomic_file.h"

namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("an atomic file replaces its target whole, or leaves it as it was", "[train][checkpoint]") {
  agf::test::ScratchDir scratch;
  const std::string path = scratch.write("target", "old\n");
  {
    agf::train::AtomicFile file(path);
    file.write("new", 3);
    CHECK(read_text(path) == "old\n");  // nothing visible before commit
    CHECK(fs::exists(path + ".tmp"));
  }  // not committed (an exception on the way): discarded
  CHECK(read_text(path) == "old\n");
  CHECK_FALSE(fs::exists(path + ".tmp"));
  agf::train::AtomicFile file(path);
  file.write("new\n", 4);
  file.commit();
  CHECK(read_text(path) == "new\n");
  CHECK_FALSE(fs::exists(path + ".tmp"));
  CHECK_THROWS_WITH(agf::train::AtomicFile(scratch.file("no-such-folder/file")),
                    Catch::Contains("no-such-folder/file.tmp: cannot create"));
}
