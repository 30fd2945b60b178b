// libFuzzer target for binarized datasets (`agf train --data`, `agf eval --data`): the input is a token
// dataset file. Opening must succeed or throw agf::Error; a dataset that opens has every span inside the
// file and every id inside its vocabulary, and batches of it cover each pair once.
//   build-sanitize/fuzz_token_dataset tests/fuzz/corpus/fuzz_token_dataset -max_total_time=60      (docs/errors.md)
#include <cstdint>
#include <string_view>
#include <vector>

#include "data/batch_sampler.h"
#include "data/token_dataset.h"
#include "tests/fuzz/fuzz_support.h"

using agf::fuzz::expect_success_or_agf_error;
using agf::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = agf::fuzz::scratch_file_with("dataset.bin",
                                                        std::string_view(reinterpret_cast<const char*>(data), size));
  expect_success_or_agf_error([&] {
    const auto dataset = agf::data::TokenDataset::open(path);
    std::uint64_t tokens = 0;
    for (std::size_t i = 0; i < dataset.size(); ++i) {
      for (const auto side : {dataset.source(i), dataset.target(i)}) {
        tokens += side.size();
        for (const auto id : side) require(id >= 0 && static_cast<std::uint64_t>(id) < dataset.vocab_size());
      }
    }
    require(tokens == dataset.source_tokens() + dataset.target_tokens() && tokens * 4 <= size);
    const auto sampler = agf::data::BatchSampler::for_dataset(dataset, {.max_tokens = 256, .seed = 7});
    std::vector<int> seen(dataset.size(), 0);
    for (const auto& batch : sampler.epoch_batches(0)) {
      for (const auto index : batch) ++seen.at(index);
    }
    for (const int count : seen) require(count == 1);
  });
  return 0;
}
