// The fuzz targets' entry points, compiled into the test suite under names of their own, run over their
// committed inputs: the seed corpora (tests/fuzz/corpus/<target>/) and every input a fuzzer has ever found
// a fault with (tests/fuzz/regressions/<target>/). So each finding stays a test in every build, with or
// without clang and libFuzzer, and under ASan and UBSan in tools/test.sh's sanitizer stage.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#define LLVMFuzzerTestOneInput fuzz_safetensors_input
#include "tests/fuzz/fuzz_safetensors.cc"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_bpe_model_input
#include "tests/fuzz/fuzz_bpe_model.cc"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_bpe_codec_input
#include "tests/fuzz/fuzz_bpe_codec.cc"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_corpus_input
#include "tests/fuzz/fuzz_corpus.cc"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_token_dataset_input
#include "tests/fuzz/fuzz_token_dataset.cc"
#undef LLVMFuzzerTestOneInput

namespace {
using FuzzEntry = int (*)(const std::uint8_t*, std::size_t);
const std::map<std::string, FuzzEntry> fuzz_targets = {{"fuzz_safetensors", fuzz_safetensors_input},
                                                       {"fuzz_bpe_model", fuzz_bpe_model_input},
                                                       {"fuzz_bpe_codec", fuzz_bpe_codec_input},
                                                       {"fuzz_corpus", fuzz_corpus_input},
                                                       {"fuzz_token_dataset", fuzz_token_dataset_input}};
}  // namespace

TEST_CASE("every committed fuzz input, seed or past finding, runs through its target cleanly", "[fuzz][errors]") {
  const std::filesystem::path fuzz = std::filesystem::path(AGF_SOURCE_DIR) / "tests" / "fuzz";
  std::size_t seeds = 0;
  for (const auto& [name, entry] : fuzz_targets) {
    for (const char* kind : {"corpus", "regressions"}) {
      const auto folder = fuzz / kind / name;
      if (!std::filesystem::is_directory(folder)) continue;
      for (const auto& file : std::filesystem::directory_iterator(folder)) {
        INFO(file.path().string());
        // The raw bytes, as libFuzzer reads them (agf::data::read_file would decompress an xz seed).
        std::ifstream in(file.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        CHECK(entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()) == 0);
        seeds += std::string(kind) == "corpus";
      }
    }
  }
  CHECK(seeds >= fuzz_targets.size());
}
