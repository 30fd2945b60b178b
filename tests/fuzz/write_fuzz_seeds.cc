// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) with the framework's own
// writers, so that the seeds are what agf makes today: small valid inputs from which libFuzzer's mutations
// reach deep into each reader. Rerun after a format change, then commit the result:
//   build-sanitize/write_fuzz_seeds tests/fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "data/bpe_learn.h"
#include "data/text_file.h"
#include "data/token_dataset.h"
#include "nn/transformer.h"
#include "train/checkpoint.h"

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> sample_lines = {"The quick brown fox jumps over the lazy dog.",
                                               "Der schnelle braune Fuchs springt über den faulen Hund.",
                                               "Straße, Größe; naïve café — ½ € 42",
                                               "中文字符。 emoji 😀👍🏽",
                                               "tabs\tand  double  spaces ",
                                               "the the then there"};

agf::data::BpeModel learned_model(std::size_t vocab_size) {
  std::vector<std::string_view> views(sample_lines.begin(), sample_lines.end());
  agf::data::BpeLearnOptions options;
  options.vocab_size = vocab_size;
  options.min_frequency = 1;
  options.character_coverage = 0.9;
  return agf::data::learn_bpe(views, options);
}

// A model far smaller than any preset (the fuzzer mutates every byte of it): d_model 4, one layer each side.
void write_micro_checkpoint(const std::string& path, const std::string& pos, bool training) {
  const agf::data::BpeModel bpe = learned_model(262);
  agf::nn::TransformerConfig config = agf::nn::TransformerConfig::from_preset("tiny");
  config.d_model = 4, config.heads = 2, config.ffn = 4, config.encoder_layers = 1, config.decoder_layers = 1;
  config.pos = pos, config.pcmv = pos.rfind("agf-", 0) == 0, config.max_distance = 3;
  config.vocabulary_size = static_cast<int64_t>(bpe.vocab_size());
  config.validate();
  const agf::nn::Transformer model(config, 3);
  const agf::train::TrainingState state;
  agf::train::save_checkpoint(path, model, config, bpe.to_json(), nullptr, training ? &state : nullptr);
}

void write_seed(const fs::path& folder, const std::string& name, const std::string& bytes) {
  fs::create_directories(folder);
  agf::data::write_file((folder / name).string(), bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_fuzz_seeds CORPUS_FOLDER (tests/fuzz/corpus)\n");
    return 2;
  }
  const fs::path root = argv[1];

  const fs::path safetensors = root / "fuzz_safetensors";
  fs::create_directories(safetensors);
  write_micro_checkpoint((safetensors / "agf-m.safetensors").string(), "agf-m", false);
  write_micro_checkpoint((safetensors / "agf-f-training.safetensors").string(), "agf-f", true);
  write_micro_checkpoint((safetensors / "t5.safetensors").string(), "t5", false);
  agf::train::save_safetensors((safetensors / "dtypes.safetensors").string(),
                               {{"f64", agf::Tensor::ones({2}, agf::DType::f64)},
                                {"bf16", agf::Tensor::ones({3}, agf::DType::bf16)},
                                {"i64", agf::Tensor::zeros({1, 2}, agf::DType::i64)},
                                {"empty", agf::Tensor::zeros({0, 3})}},
                               {{"format", "pt"}, {"note", "ü"}});
  agf::train::save_safetensors((safetensors / "no-tensors.safetensors").string(), {});

  const fs::path bpe_model = root / "fuzz_bpe_model";
  write_seed(bpe_model, "learned.json", learned_model(300).to_json() + std::string(1, '\0') + sample_lines[2]);
  write_seed(bpe_model, "bytes-only.json", agf::data::BpeModel({}, {}).to_json() + std::string(1, '\0') + "abc ▁ <s>");

  const fs::path bpe_codec = root / "fuzz_bpe_codec";
  for (std::size_t i = 0; i < sample_lines.size(); ++i)
    write_seed(bpe_codec, "line" + std::to_string(i), sample_lines[i]);

  // The target reads the first half of an input as the source file and the second as the target file.
  const fs::path corpus = root / "fuzz_corpus";
  write_seed(corpus, "plain", "Hello\nworld\r\nthird\nHallo\nWelt!\r\ndritt\n");
  write_seed(corpus, "tsv", "one\teins\ntwo\tzwei\nthree\tdrei\n________________________________");
  write_seed(corpus, "sgm",
             "<doc docid=\"1\">\n<seg id=\"1\">A &amp; B</seg>\n<seg id=\"2\">&lt;x&gt;</seg>\n</doc>\n"
             "<doc docid=\"1\">\n<seg id=\"1\">A &#38; B</seg>\n<seg id=\"2\">&quot;x'</seg>\n</doc>\n");
  write_seed(corpus, "xz", agf::data::xz_compress("a line\nanother line\n"));
  write_seed(corpus, "html",
             "<p id=\"par_id1\" xml-lang=\"en-US\">Text &amp; more</p><ahelp hid=\".\">hidden</ahelp>"
             "<p id=\"par_id2\"><emph>x</emph></p>");

  const fs::path dataset = root / "fuzz_token_dataset";
  fs::create_directories(dataset);
  agf::data::TokenPairs pairs;
  pairs.source = {{260, 261, 4}, {5}, {}};
  pairs.target = {{262}, {263, 264, 265, 3}, {6, 7}};
  agf::data::write_token_dataset((dataset / "three-pairs.bin").string(), pairs, 0x1234, 300);
  agf::data::write_token_dataset((dataset / "empty.bin").string(), {}, 0, 260);
  return 0;
}
