// libFuzzer target for the parallel-text readers: plain (two files), TSV, WMT .sgm (with entity decoding),
// xz decompression and the LibreOffice help extractor. The input is cut in two halves, the source and
// target files; each reader, strict and with --skip-invalid, must succeed or throw agf::Error.
//   build-sanitize/fuzz_corpus tests/fuzz/corpus/fuzz_corpus -max_total_time=60      (docs/errors.md)
#include <cstdint>
#include <string_view>

#include "data/entities.h"
#include "data/html_text.h"
#include "data/parallel_corpus.h"
#include "data/utf8.h"
#include "tests/fuzz/fuzz_support.h"

using agf::fuzz::expect_success_or_agf_error;
using agf::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string a = agf::fuzz::scratch_file_with("a", bytes.substr(0, size / 2));
  const std::string b = agf::fuzz::scratch_file_with("b", bytes.substr(size / 2));
  agf::data::ReadOptions strict, lenient;
  lenient.skip_invalid = true;
  for (const auto& options : {strict, lenient}) {
    for (const auto format :
         {agf::data::CorpusFormat::plain, agf::data::CorpusFormat::tsv, agf::data::CorpusFormat::sgm}) {
      expect_success_or_agf_error([&] {
        agf::data::ReadReport report;
        const auto corpus = agf::data::read_parallel(format, a, b, options, &report);
        // What a reader returns is paired and valid UTF-8, whatever it was given.
        require(corpus.source.size() == corpus.target.size() && report.pairs == corpus.size());
        for (std::size_t i = 0; i < corpus.size(); ++i) {
          require(agf::data::is_valid_utf8(corpus.source[i]) && agf::data::is_valid_utf8(corpus.target[i]));
        }
      });
    }
  }
  expect_success_or_agf_error([&] { agf::data::xz_decompress(bytes, "fuzz"); });
  (void)agf::data::decode_entities(bytes);
  (void)agf::data::extract_id_texts(bytes, [](std::string_view) { return true; });
  return 0;
}
