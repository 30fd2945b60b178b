// libFuzzer target for checkpoints: the input is a .safetensors file, read as `agf translate --checkpoint`
// reads it (load_model: the header and tensors, the agf.config.* and agf.state.* metadata, the config
// against the weights present, the model built and its parameters copied in, the BPE model in agf.bpe).
// Each step must succeed or throw agf::Error; the tensors read never hold more bytes than the file.
//   build-sanitize/fuzz_safetensors tests/fuzz/corpus/fuzz_safetensors -max_total_time=60      (docs/errors.md)
#include <cstdint>
#include <string_view>

#include "core/dtype.h"
#include "tests/fuzz/fuzz_support.h"
#include "train/checkpoint.h"

using agf::fuzz::expect_success_or_agf_error;
using agf::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = agf::fuzz::scratch_file_with("checkpoint.safetensors",
                                                        std::string_view(reinterpret_cast<const char*>(data), size));
  expect_success_or_agf_error([&] {
    const auto file = agf::train::load_safetensors(path);
    std::size_t bytes = 0;
    for (const auto& [name, tensor] : file.tensors)
      bytes += static_cast<std::size_t>(tensor.numel()) * agf::dtype_size(tensor.dtype());
    require(bytes <= size);
  });
  expect_success_or_agf_error([&] { (void)agf::train::load_model(path); });
  return 0;
}
