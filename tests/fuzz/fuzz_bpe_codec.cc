// libFuzzer target for the BPE codec: for any valid UTF-8 input, decode(encode(x)) == x and every id
// is inside the vocabulary; any byte string read as ids decodes without crashing; the pre-tokenizer's
// words always concatenate back to the input.
//   build-sanitize/fuzz_bpe_codec tests/fuzz/corpus/fuzz_bpe_codec -max_total_time=60      (docs/errors.md)
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_codec.h"
#include "data/bpe_learn.h"
#include "data/pretokenizer.h"
#include "data/utf8.h"

namespace {
const agf::data::BpeModel& model() {
  static const agf::data::BpeModel learned = [] {
    const std::vector<std::string> lines = {"The quick brown fox jumps over the lazy dog.",
                                            "Der schnelle braune Fuchs springt über den faulen Hund.",
                                            "Straße, Größe, Übergröße; naïve café — ½ € 42",
                                            "中文字符和标点。 emoji 😀👍🏽 ok",
                                            "tabs\tand  double  spaces ",
                                            "the the the then there their",
                                            "<s> </s> <0x41> ▁ literal marker"};
    std::vector<std::string_view> views(lines.begin(), lines.end());
    agf::data::BpeLearnOptions options;
    options.vocab_size = 420;
    options.min_frequency = 1;
    options.character_coverage = 0.95;
    return agf::data::learn_bpe(views, options);
  }();
  return learned;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const agf::data::BpeCodec codec(model());
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (agf::data::is_valid_utf8(text)) {
    std::string joined;
    for (auto word : agf::data::split_words(text)) joined += word;
    if (joined != text) std::abort();
    const auto ids = codec.encode(text);
    for (auto id : ids) {
      if (id < agf::data::first_byte_id || static_cast<std::size_t>(id) >= model().vocab_size()) std::abort();
    }
    if (codec.decode(ids) != text) std::abort();
  }
  std::vector<agf::data::TokenId> ids;
  for (std::size_t i = 0; i + 1 < size; i += 2) {
    ids.push_back(static_cast<agf::data::TokenId>((data[i] | (data[i + 1] << 8)) % model().vocab_size()));
  }
  (void)codec.decode(ids);
  return 0;
}
