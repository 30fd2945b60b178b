// libFuzzer target for BPE models as `agf bpe encode --model` meets them: the input is a model's JSON, then
// a NUL byte, then text to encode. Loading must succeed or throw agf::Error; a model that loads must
// encode valid UTF-8 into ids of its vocabulary that decode back to the text, byte for byte.
//   build-sanitize/fuzz_bpe_model tests/fuzz/corpus/fuzz_bpe_model -max_total_time=60      (docs/errors.md)
#include <cstdint>
#include <string>
#include <string_view>

#include "data/bpe_codec.h"
#include "data/bpe_model.h"
#include "data/utf8.h"
#include "tests/fuzz/fuzz_support.h"

using agf::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = bytes.find('\0');
  const std::string json(bytes.substr(0, nul));
  const std::string_view text = nul == std::string_view::npos ? std::string_view() : bytes.substr(nul + 1);
  agf::data::BpeModel model;
  try {
    model = agf::data::BpeModel::from_json(json, "fuzz");
  } catch (const agf::Error&) {
    return 0;
  }
  const agf::data::BpeCodec codec(model);
  if (agf::data::is_valid_utf8(text)) {
    const auto ids = codec.encode(text);
    for (auto id : ids) require(id >= agf::data::first_byte_id && static_cast<std::size_t>(id) < model.vocab_size());
    require(codec.decode(ids) == text);
  }
  // The model's own JSON loads again as the same model.
  require(agf::data::BpeModel::from_json(model.to_json(), "fuzz (saved)").hash() == model.hash());
  return 0;
}
