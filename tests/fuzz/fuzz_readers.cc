// libFuzzer target for everything that reads files: plain/TSV/.sgm parallel readers, the token dataset
// loader, the BPE model loader, the HTML text extractor and entity decoding. Each must either succeed
// or throw agf::Error; anything else (a crash, another exception, a sanitizer report) is a bug.
//   build-fuzz/fuzz_readers -max_total_time=60
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"
#include "data/bpe_model.h"
#include "data/entities.h"
#include "data/html_text.h"
#include "data/parallel_corpus.h"
#include "data/text_file.h"
#include "data/token_dataset.h"

namespace {
// A folder of this process's own under the system's temporary folder (TMPDIR, else /tmp), removed at exit.
std::string scratch_file(const char* name) {
  static const std::string directory = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "agf-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    static const std::string made = pattern;
    std::atexit([] { std::filesystem::remove_all(made); });
    return pattern;
  }();
  return directory + "/" + name;
}

template <class Function>
void expect_success_or_agf_error(Function&& function) {
  try {
    function();
  } catch (const agf::Error&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string_view first = bytes.substr(0, size / 2), second = bytes.substr(size / 2);
  const std::string a = scratch_file("a"), b = scratch_file("b");
  agf::data::write_file(a, first);
  agf::data::write_file(b, second);
  agf::data::ReadOptions strict, lenient;
  lenient.skip_invalid = true;
  for (const auto& options : {strict, lenient}) {
    expect_success_or_agf_error([&] { agf::data::read_plain(a, b, options); });
    expect_success_or_agf_error([&] { agf::data::read_tsv(a, options); });
    expect_success_or_agf_error([&] { agf::data::read_sgm(a, b, options); });
  }
  const std::string whole = scratch_file("whole");
  agf::data::write_file(whole, bytes);
  expect_success_or_agf_error([&] { agf::data::TokenDataset::open(whole); });
  expect_success_or_agf_error([&] { agf::data::BpeModel::from_json(std::string(bytes), "fuzz"); });
  expect_success_or_agf_error([&] { agf::data::xz_decompress(bytes, "fuzz"); });
  (void)agf::data::decode_entities(bytes);
  (void)agf::data::extract_id_texts(bytes, [](std::string_view) { return true; });
  return 0;
}
