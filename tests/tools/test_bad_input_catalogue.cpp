// The catalogue of malformed inputs (docs/errors.md): for every reader of files and flags, each malformed
// input we know of, given to the `agf` program as a user would give it, with the exit status it must end
// in (1: bad input, 2: bad flag; never 3, an unexpected error, nor a signal) and a fragment of the message,
// which names the file, line or flag. docs/errors.md lists every case; this test checks the two agree.
// AGF_PRINT_CATALOGUE=1 prints what agf says to each case (to review the messages whole).
#include <catch2/catch.hpp>

#include <lzma.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "data/bpe_model.h"
#include "data/text_file.h"
#include "data/token_dataset.h"
#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/checkpoint.h"
#include "train/safetensors.h"

namespace {

using agf::data::read_file;

// The good inputs the malformed ones are made from, and the scratch folder they are written to.
struct Workspace {
  agf::test::ScratchDir scratch;
  std::string fixture = agf::test::tiny_fixture;
  std::string bpe, checkpoint, data;  // a BPE model, a tiny checkpoint made with it, a dataset prepared with it
  std::string current_case;           // inputs are named after the case that writes them

  // `bytes` as the file "<case><extension>"; returns its path.
  std::string input(const std::string& extension, const std::string& bytes) const {
    return scratch.write(current_case + extension, bytes);
  }
  // A prepared-dataset folder "<case>/" holding `bytes` as SPLIT.bin beside a copy of the BPE model.
  std::string dataset_folder(const std::string& split, const std::string& bytes) const {
    const std::string folder = scratch.file(current_case);
    std::filesystem::create_directories(folder);
    agf::data::write_file(folder + "/" + split + ".bin", bytes);
    std::filesystem::copy_file(bpe, folder + "/bpe.json");
    return folder;
  }
  std::string good_dataset() const { return read_file(data + "/valid.bin"); }
  std::string good_bpe() const { return read_file(bpe); }
};

// 8 bytes of little-endian header length, the header, the data.
std::string safetensors_bytes(const std::string& header, const std::string& data = "") {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  return bytes + header + data;
}

// The good checkpoint, changed by `edit`, written as the case's input.
std::string edited_checkpoint(const Workspace& w, const std::function<void(agf::train::SafetensorsFile&)>& edit) {
  auto file = agf::train::load_safetensors(w.checkpoint);
  edit(file);
  const std::string path = w.scratch.file(w.current_case + ".safetensors");
  agf::train::save_safetensors(path, file.tensors, file.metadata);
  return path;
}

// The good BPE model's JSON, changed by `edit`.
std::string edited_bpe(const Workspace& w, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json json = nlohmann::json::parse(w.good_bpe());
  edit(json);
  return json.dump();
}

// A copy of `bytes` with the 8 (or 4) bytes at `offset` set to `value`, little-endian.
template <class Integer>
std::string with_field(std::string bytes, std::size_t offset, Integer value) {
  REQUIRE(offset + sizeof value <= bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof value);
  return bytes;
}
template <class Integer>
Integer field(const std::string& bytes, std::size_t offset) {
  Integer value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

// An xz stream whose block header asks for a 4 GiB dictionary (LZMA2 property 40), its CRC32 fixed.
std::string xz_with_huge_dictionary() {
  std::string xz = agf::data::xz_compress("a line\n");
  // Stream header (12 bytes), then the block header: size byte 0x02 (12 bytes), flags 0x00 (one filter),
  // filter id 0x21 (LZMA2), 1 property byte, the property, 3 bytes of padding, CRC32 of the 8 before.
  REQUIRE(xz.substr(12, 4) == std::string("\x02\x00\x21\x01", 4));
  xz[16] = 40;
  const uint32_t crc = lzma_crc32(reinterpret_cast<const uint8_t*>(xz.data() + 12), 8, 0);
  return with_field(xz, 20, crc);
}

struct BadInput {
  std::string name;                                  // the case's name in docs/errors.md
  int status;                                        // the exit status agf must end with
  std::string message;                               // a fragment of what agf must print
  std::function<std::string(Workspace&)> arguments;  // writes the input; agf's arguments
};

// One well-formed line of `agf eval --sentences` (train/sentence_scores.h).
constexpr const char* kGoodSentence =
    "{\"index\": 0, \"source_tokens\": 3, \"target_tokens\": 4, \"correct\": 2, \"nll\": 1.5}";

// Dataset header fields (data/token_dataset.h): byte offsets.
constexpr std::size_t kVersion = 8, kVocabHash = 16, kPairs = 32, kFileSize = 56, kOffsets = 64;

std::vector<BadInput> catalogue() {
  const auto translate = [](const std::string& checkpoint) {
    return "translate --checkpoint " + checkpoint + " < /dev/null";
  };
  const auto encode = [](const std::string& model) { return "bpe encode --model " + model + " < /dev/null"; };
  const auto prepare = [](const Workspace& w, const std::string& source, const std::string& target) {
    return "corpus prepare --train-src " + source + (target.empty() ? "" : " --train-tgt " + target) + " --bpe " +
           w.bpe + " --out " + w.scratch.file(w.current_case + "-out");
  };
  const auto eval = [](const Workspace& w, const std::string& folder, const std::string& split) {
    return "eval --checkpoint " + w.checkpoint + " --data " + folder + " --split " + split;
  };
  const auto dataset = [eval](const Workspace& w, const std::string& bytes) {
    return eval(w, w.dataset_folder("bad", bytes), "bad");
  };
  const auto train = [](const Workspace& w, const std::string& extra) {
    return "train --data " + w.scratch.path().string() + " --out " + w.scratch.file("run") + " " + extra;
  };
  // A file of one tensor "x" described by `fields`, with 8 bytes of data.
  const auto one_tensor = [](const std::string& fields) {
    return safetensors_bytes("{\"x\":{" + fields + "}}", std::string(8, '\0'));
  };

  return {
      // ---- safetensors checkpoints (agf translate/eval/inspect --checkpoint, train --resume) ----
      {"st-empty-file", 1, "st-empty-file.safetensors: not a safetensors file (0 bytes",
       [=](Workspace& w) { return translate(w.input(".safetensors", "")); }},
      {"st-header-past-end", 1, "header length 1000 but the file has 16 bytes",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", with_field<uint64_t>(std::string(16, '{'), 0, 1000)));
       }},
      {"st-header-length-huge", 1, "header length 18446744073709551615 but the file has",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", with_field<uint64_t>(std::string(16, '{'), 0, ~0ull)));
       }},
      {"st-not-json", 1, "st-not-json.safetensors: corrupt safetensors header: [json.exception.parse_error",
       [=](Workspace& w) { return translate(w.input(".safetensors", safetensors_bytes("{\"x\": [1, 2"))); }},
      {"st-not-object", 1, "st-not-object.safetensors: corrupt safetensors header (not a JSON object)",
       [=](Workspace& w) { return translate(w.input(".safetensors", safetensors_bytes("[1, 2, 3]"))); }},
      {"st-metadata-not-utf8", 1, "invalid string: ill-formed UTF-8 byte",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", safetensors_bytes("{\"__metadata__\":{\"k\":\"\xC3\x28\"}}")));
       }},
      {"st-metadata-not-object", 1, "\"__metadata__\" is string, not an object of strings",
       [=](Workspace& w) { return translate(w.input(".safetensors", safetensors_bytes(R"({"__metadata__":"v1"})"))); }},
      {"st-metadata-value-not-string", 1, "metadata 'heads' is 4, not a string",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", safetensors_bytes(R"({"__metadata__":{"heads":4}})")));
       }},
      {"st-entry-not-object", 1, "tensor 'x' is described by array, not by an object",
       [=](Workspace& w) { return translate(w.input(".safetensors", safetensors_bytes(R"({"x":[0, 8]})"))); }},
      {"st-missing-dtype", 1, "tensor 'x' lacks \"dtype\"",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("shape":[2],"data_offsets":[0,8])")));
       }},
      {"st-unknown-dtype", 1, "tensor 'x' has dtype 'U16', which agf does not read",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"U16","shape":[4],"data_offsets":[0,8])")));
       }},
      {"st-dtype-size-mismatch", 1, "tensor 'x' f64 [2] needs 16 bytes but its data_offsets span 8",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F64","shape":[2],"data_offsets":[0,8])")));
       }},
      {"st-negative-extent", 1, "tensor 'x' has an extent -2, not a whole number >= 0",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[-2],"data_offsets":[0,8])")));
       }},
      {"st-fractional-extent", 1, "tensor 'x' has an extent 1.5, not a whole number >= 0",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[1.5],"data_offsets":[0,8])")));
       }},
      {"st-extent-beyond-int64", 1, "tensor 'x' has an extent 1e+300, not a whole number >= 0",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[1e300],"data_offsets":[0,8])")));
       }},
      {"st-element-count-overflow", 1, "tensor 'huge' f32: shape [4611686018427387904, 4]",
       [=](Workspace& w) {
         return translate(w.input(
             ".safetensors",
             safetensors_bytes(R"({"huge":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})")));
       }},
      {"st-byte-size-overflow", 1, "do not fit in 64 bits",
       [=](Workspace& w) {
         return translate(w.input(
             ".safetensors",
             safetensors_bytes(R"({"huge":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})")));
       }},
      {"st-offsets-not-pair", 1, "tensor 'x' has data_offsets [0], not [begin, end]",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[2],"data_offsets":[0])")));
       }},
      {"st-offset-negative", 1, "tensor 'x' has a data offset -8, not a whole number >= 0",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[2],"data_offsets":[-8,0])")));
       }},
      {"st-offsets-reversed", 1, "tensor 'x' has data_offsets [8, 0], which end before they begin",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[2],"data_offsets":[8,0])")));
       }},
      {"st-offset-past-end", 1, "truncated: tensor 'x' ends at byte 16 of a 8-byte data section",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[2],"data_offsets":[8,16])")));
       }},
      {"st-tensors-overlap", 1, "tensors 'a' [0, 8) and 'b' [4, 12) overlap",
       [=](Workspace& w) {
         return translate(
             w.input(".safetensors", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                                       std::string(12, '\0'))));
       }},
      {"st-many-entries-one-range", 1, "overlap",
       [=](Workspace& w) {
         // 2,000 entries over the same 64 KiB: checked before allocating, not 128 MiB read and then refused.
         std::string header = "{";
         for (int i = 0; i < 2000; ++i) {
           header += fmt::format(R"({}"t{}":{{"dtype":"F32","shape":[16384],"data_offsets":[0,65536]}})", i ? "," : "",
                                 i);
         }
         return translate(w.input(".safetensors", safetensors_bytes(header + "}", std::string(65536, '\0'))));
       }},
      {"st-cut-in-half", 1, "st-cut-in-half.safetensors: truncated: tensor",
       [=](Workspace& w) {
         const std::string bytes = read_file(w.checkpoint);
         return translate(w.input(".safetensors", bytes.substr(0, bytes.size() / 2)));
       }},
      {"st-not-a-checkpoint", 1, "checkpoint metadata lacks 'agf.config.",
       [=](Workspace& w) {
         return translate(w.input(".safetensors", one_tensor(R"("dtype":"F32","shape":[2],"data_offsets":[0,8])")));
       }},
      {"st-config-number-text", 1, "'agf.config.heads' is not an integer: '2abc'",
       [=](Workspace& w) {
         return translate(edited_checkpoint(w, [](auto& f) { f.metadata["agf.config.heads"] = "2abc"; }));
       }},
      {"st-state-negative-step", 1, "'agf.state.step' is not a whole number >= 0: '-1'",
       [=](Workspace& w) {
         return translate(edited_checkpoint(w, [](auto& f) {
           for (const auto& [key, value] : agf::train::TrainingState{}.to_metadata()) f.metadata[key] = value;
           f.metadata["agf.state.step"] = "-1";
         }));
       }},
      {"st-config-beyond-weights", 1, "has about 1.33e+07 weights but the file holds 36240 values",
       [=](Workspace& w) {
         return translate(edited_checkpoint(w, [](auto& f) {
           f.metadata["agf.config.d_model"] = "1024";
           f.metadata["agf.config.heads"] = "16";
         }));
       }},
      {"st-missing-tensor", 1, "the checkpoint has no tensor 'encoder.layers.0.norm1.bias' that this model needs",
       [=](Workspace& w) {
         return translate(edited_checkpoint(w, [](auto& f) {
           std::erase_if(f.tensors, [](const auto& named) { return named.first == "encoder.layers.0.norm1.bias"; });
         }));
       }},
      {"st-wrong-shape", 1,
       "tensor 'encoder.layers.0.norm1.bias' is f32[3] on cpu but the model's parameter is f32[32]",
       [=](Workspace& w) {
         return translate(edited_checkpoint(w, [](auto& f) {
           for (auto& [name, t] : f.tensors) {
             if (name == "encoder.layers.0.norm1.bias") t = agf::Tensor::zeros({3});
           }
         }));
       }},
      {"st-unknown-tensor", 1, "tensor 'stray' is not a parameter of this model",
       [=](Workspace& w) {
         return translate(
             edited_checkpoint(w, [](auto& f) { f.tensors.emplace_back("stray", agf::Tensor::zeros({1})); }));
       }},
      {"st-nan-weight", 1, "tensor 'encoder.layers.0.norm1.bias' holds nan at element 1: the weights are not finite",
       [=](Workspace& w) {
         return translate(edited_checkpoint(w, [](auto& f) {
           for (auto& [name, t] : f.tensors) {
             if (name != "encoder.layers.0.norm1.bias") continue;
             std::vector<double> values = t.to_double_vector();
             values[1] = std::nan("");
             t = agf::Tensor::from_vector(values, t.shape());
           }
         }));
       }},
      {"st-embedded-bpe-corrupt", 1,
       "st-embedded-bpe-corrupt.safetensors (agf.bpe)' is not a BPE model: not valid JSON",
       [=](Workspace& w) {
         return translate(edited_checkpoint(w, [](auto& f) { f.metadata["agf.bpe"] = "{\"format\": "; }));
       }},

      // ---- BPE models (agf bpe encode/decode --model, corpus prepare --bpe, init --vocab) ----
      {"bpe-empty-file", 1, "bpe-empty-file.json' is not a BPE model: not valid JSON",
       [=](Workspace& w) { return encode(w.input(".json", "")); }},
      {"bpe-not-json", 1, "bpe-not-json.json' is not a BPE model: not valid JSON",
       [=](Workspace& w) { return encode(w.input(".json", "{\"format\": \"agf-bpe\",")); }},
      {"bpe-not-utf8", 1, "ill-formed UTF-8 byte",
       [=](Workspace& w) { return encode(w.input(".json", "{\"format\": \"agf-bpe\", \"alphabet\": [\"\xFF\"]}")); }},
      {"bpe-not-object", 1, "bpe-not-object.json' is not a BPE model: its \"format\" is not \"agf-bpe\"",
       [=](Workspace& w) { return encode(w.input(".json", "[1, 2, 3]")); }},
      {"bpe-other-format", 1, "its \"format\" is not \"agf-bpe\"",
       [=](Workspace& w) {
         return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["format"] = "sentencepiece"; })));
       }},
      {"bpe-version-missing", 1, "BPE model version (missing) is not supported",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j.erase("version"); }))); }},
      {"bpe-version-fraction", 1, "BPE model version 1.5 is not supported",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["version"] = 1.5; }))); }},
      {"bpe-version-huge", 1, "BPE model version 1e+300 is not supported",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["version"] = 1e300; }))); }},
      {"bpe-alphabet-not-array", 1, "the BPE model's \"alphabet\" is string, not an array",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["alphabet"] = "abc"; }))); }},
      {"bpe-alphabet-entry-not-string", 1, "alphabet entry 1 is number, not a string",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["alphabet"][1] = 7; }))); }},
      {"bpe-alphabet-entry-two-characters", 1, "alphabet entry 'ab' is not one character",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["alphabet"][1] = "ab"; }))); }},
      {"bpe-alphabet-duplicate", 1, "bpe-alphabet-duplicate.json': BPE model: token text '▁' appears twice",
       [=](Workspace& w) {
         return encode(w.input(".json", edited_bpe(w, [](auto& j) {
                                 j["alphabet"].push_back(j["alphabet"][0]);
                                 j.erase("hash");
                               })));
       }},
      {"bpe-merge-not-pair", 1, "merge 0 is not a pair of token texts",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["merges"][0] = {"a"}; }))); }},
      {"bpe-merge-unknown-token", 1, "merge 0 ('no-such-token', ",
       [=](Workspace& w) {
         return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["merges"][0][0] = "no-such-token"; })));
       }},
      {"bpe-hash-mismatch", 1, "the recorded hash does not match the alphabet and merges",
       [=](Workspace& w) {
         return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["hash"] = "0123456789abcdef"; })));
       }},
      {"bpe-vocab-size-edited", 1, "\"vocab_size\" is 8000 but the model has 400",
       [=](Workspace& w) { return encode(w.input(".json", edited_bpe(w, [](auto& j) { j["vocab_size"] = 8000; }))); }},
      {"bpe-encode-stdin-not-utf8", 1, "<stdin>:2: invalid UTF-8 at byte 5 of the line (byte 0xC3)",
       [=](Workspace& w) { return "bpe encode --model " + w.bpe + " < " + w.input(".txt", "good\nbad \xC3\x28\n"); }},
      {"bpe-decode-id-too-large", 1, "<stdin>:1: '400' is not a token id of this model (0..399)",
       [=](Workspace& w) { return "bpe decode --ids --model " + w.bpe + " < " + w.input(".txt", "5 400\n"); }},
      {"bpe-decode-id-negative", 1, "<stdin>:2: '-1' is not a token id of this model",
       [=](Workspace& w) { return "bpe decode --ids --model " + w.bpe + " < " + w.input(".txt", "5\n-1 6\n"); }},
      {"bpe-decode-id-trailing-text", 1, "<stdin>:1: '12abc' is not a token id of this model",
       [=](Workspace& w) { return "bpe decode --ids --model " + w.bpe + " < " + w.input(".txt", "12abc\n"); }},
      {"bpe-decode-unknown-token", 1, "<stdin>:1: 'nosuchtoken' is not a token of this model",
       [=](Workspace& w) { return "bpe decode --model " + w.bpe + " < " + w.input(".txt", "nosuchtoken\n"); }},
      {"bpe-learn-input-not-utf8", 1, "bpe-learn-input-not-utf8.txt:2: invalid UTF-8 at byte 1",
       [=](Workspace& w) {
         return "bpe learn --vocab-size 300 --input " + w.input(".txt", "fine\n\xFF\n") + " --output " +
                w.scratch.file("b.json");
       }},

      // ---- parallel corpora (agf corpus prepare) ----
      {"plain-line-counts-differ", 1, "parallel files differ in length: '",
       [=](Workspace& w) {
         return prepare(w, w.input(".en", "one\ntwo\n"), w.scratch.write(w.current_case + ".de", "eins\n"));
       }},
      {"plain-source-not-utf8", 1, "plain-source-not-utf8.en:2: invalid UTF-8 at byte 3 of the line (byte 0xE2)",
       [=](Workspace& w) {
         return prepare(w, w.input(".en", "one\ntw\xE2\x82\n"),
                        w.scratch.write(w.current_case + ".de", "eins\nzwei\n"));
       }},
      {"plain-target-not-utf8", 1, "plain-target-not-utf8.de:1: invalid UTF-8 at byte 1 of the line (byte 0xED)",
       [=](Workspace& w) {  // a UTF-16 surrogate, encoded as UTF-8: not valid UTF-8
         return prepare(w, w.input(".en", "one\n"), w.scratch.write(w.current_case + ".de", "\xED\xA0\x80\n"));
       }},
      {"tsv-no-tab", 1, "tsv-no-tab.tsv:2: a TSV line needs two columns (source<TAB>target) but has no tab",
       [=](Workspace& w) { return prepare(w, w.input(".tsv", "one\teins\ntwo zwei\n"), ""); }},
      {"tsv-three-columns", 1,
       "tsv-three-columns.tsv:1: a TSV line needs exactly two columns but has more than one tab",
       [=](Workspace& w) { return prepare(w, w.input(".tsv", "one\teins\tuno\n"), ""); }},
      {"tsv-not-utf8", 1, "tsv-not-utf8.tsv:1: invalid UTF-8 at byte 5 of the line (byte 0xC0)",
       [=](Workspace& w) { return prepare(w, w.input(".tsv", "one\t\xC0\xAF\n"), ""); }},
      {"tsv-with-target-file", 2, "--train-tgt: not used with a .tsv --train-src",
       [=](Workspace& w) { return prepare(w, w.input(".tsv", "one\teins\n"), w.fixture + "/train.de"); }},
      {"sgm-no-segments", 1, "sgm-no-segments.sgm' holds no <seg> elements: is it a WMT .sgm file?",
       [=](Workspace& w) {
         return prepare(w, w.input(".sgm", "<doc>\nplain text\n</doc>\n"),
                        w.input(".de.sgm", "<seg id=\"1\">x</seg>\n"));
       }},
      {"sgm-segment-unclosed", 1,
       "sgm-segment-unclosed.sgm:3: malformed segment: expected <seg ...>text</seg> on one line",
       [=](Workspace& w) {
         return prepare(w, w.input(".sgm", "<doc>\n<seg id=\"1\">a</seg>\n<seg id=\"2\">b\n</doc>\n"),
                        w.input(".de.sgm", "<seg id=\"1\">x</seg>\n<seg id=\"2\">y</seg>\n"));
       }},
      {"sgm-segment-not-utf8", 1, "sgm-segment-not-utf8.sgm:2: invalid UTF-8 at byte 3 of the segment (byte 0xFF)",
       [=](Workspace& w) {
         return prepare(w, w.input(".sgm", "<doc>\n<seg id=\"1\"> a&amp;\xFF</seg>\n</doc>\n"),
                        w.input(".de.sgm", "<seg id=\"1\">x</seg>\n"));
       }},
      {"sgm-segment-counts-differ", 1, "has 2 segments but '",
       [=](Workspace& w) {
         return prepare(w, w.input(".sgm", "<seg id=\"1\">a</seg>\n<seg id=\"2\">b</seg>\n"),
                        w.input(".de.sgm", "<seg id=\"1\">x</seg>\n"));
       }},
      {"xz-truncated", 1, "xz-truncated.en.xz': xz data is corrupt or truncated",
       [=](Workspace& w) {
         const std::string xz = agf::data::xz_compress("one\ntwo\n");
         return prepare(w, w.input(".en.xz", xz.substr(0, xz.size() - 9)), w.fixture + "/train.de");
       }},
      {"xz-dictionary-too-large", 1, "xz-dictionary-too-large.en.xz': xz data needs more than 256 MiB to decompress",
       [=](Workspace& w) { return prepare(w, w.input(".en.xz", xz_with_huge_dictionary()), w.fixture + "/train.de"); }},

      // ---- binarized datasets (agf eval --data, agf train --data) ----
      {"dataset-empty-file", 1, "bad.bin' is not an agf token dataset: 0 bytes, shorter than the 64-byte header",
       [=](Workspace& w) { return dataset(w, ""); }},
      {"dataset-wrong-magic", 1, "is not an agf token dataset (its first bytes are not \"AGFTOKS1\")",
       [=](Workspace& w) { return dataset(w, "AGFTOKS2" + w.good_dataset().substr(8)); }},
      {"dataset-other-version", 1, "token dataset version 9 (header 64 bytes) is not supported",
       [=](Workspace& w) { return dataset(w, with_field<uint32_t>(w.good_dataset(), kVersion, 9)); }},
      {"dataset-counts-beyond-file", 1, "is truncated or corrupt: its header counts (1152921504606846976 pairs",
       [=](Workspace& w) { return dataset(w, with_field<uint64_t>(w.good_dataset(), kPairs, 1ull << 60)); }},
      {"dataset-size-field-wrong", 1, "is corrupt: its header gives a file size of",
       [=](Workspace& w) {
         const std::string good = w.good_dataset();
         return dataset(w, with_field<uint64_t>(good, kFileSize, field<uint64_t>(good, kFileSize) + 4));
       }},
      {"dataset-cut-short", 1, "is truncated or has trailing bytes",
       [=](Workspace& w) {
         const std::string good = w.good_dataset();
         return dataset(w, good.substr(0, good.size() - 4));
       }},
      {"dataset-trailing-bytes", 1, "is truncated or has trailing bytes",
       [=](Workspace& w) { return dataset(w, w.good_dataset() + "junk"); }},
      {"dataset-offsets-not-from-zero", 1, "is corrupt: source offsets do not span 0..",
       [=](Workspace& w) { return dataset(w, with_field<uint64_t>(w.good_dataset(), kOffsets, 1)); }},
      {"dataset-offsets-decrease", 1, "is corrupt: source offsets decrease at pair 2",
       [=](Workspace& w) {
         const std::string good = w.good_dataset();
         return dataset(w, with_field<uint64_t>(good, kOffsets + 16, field<uint64_t>(good, kOffsets + 24) + 1));
       }},
      {"dataset-id-beyond-vocabulary", 1, "is corrupt: token 0 has id 400, outside the vocabulary of 400",
       [=](Workspace& w) {
         const std::string good = w.good_dataset();
         const uint64_t pairs = field<uint64_t>(good, kPairs);
         return dataset(w, with_field<int32_t>(good, kOffsets + 16 * (pairs + 1), 400));
       }},
      {"dataset-id-negative", 1, "is corrupt: token 0 has id -1",
       [=](Workspace& w) {
         const std::string good = w.good_dataset();
         const uint64_t pairs = field<uint64_t>(good, kPairs);
         return dataset(w, with_field<int32_t>(good, kOffsets + 16 * (pairs + 1), -1));
       }},
      {"dataset-other-bpe-model", 1, "bad.bin' was made with another BPE model (vocabulary hash",
       [=](Workspace& w) { return dataset(w, with_field<uint64_t>(w.good_dataset(), kVocabHash, 0x1234)); }},
      {"dataset-no-pairs", 1, "bad.bin holds no pairs: there is nothing to evaluate",
       [=](Workspace& w) {
         const auto bpe = agf::data::BpeModel::load(w.bpe);
         const std::string path = w.scratch.file("empty.bin");
         agf::data::write_token_dataset(path, {}, bpe.hash(), bpe.vocab_size());
         return dataset(w, read_file(path));
       }},
      {"dataset-split-missing", 1, "nosuch.bin does not exist (splits come from `agf corpus prepare`)",
       [=](Workspace& w) { return eval(w, w.data, "nosuch"); }},
      {"dataset-train-cut-short", 1, "train.bin' is truncated or has trailing bytes",
       [=](Workspace& w) {
         const std::string good = w.good_dataset();
         const std::string folder = w.dataset_folder("train", good.substr(0, good.size() - 4));
         std::filesystem::copy_file(w.data + "/valid.bin", folder + "/valid.bin");
         return "train --preset tiny --max-steps 1 --data " + folder + " --out " + w.scratch.file("run");
       }},

      // ---- per-sentence scores (agf compare A B; agf eval --sentences writes them) ----
      {"sentence-scores-not-json", 1, "sentence-scores-not-json.jsonl:1: not a JSON object",
       [=](Workspace& w) {
         const std::string path = w.input(".jsonl", "not json\n");
         return "compare " + path + " " + path;
       }},
      {"sentence-scores-field-missing", 1,
       "sentence-scores-field-missing.jsonl:2: [json.exception.out_of_range.403] key 'source_tokens' not found",
       [=](Workspace& w) {
         const std::string path = w.input(".jsonl", std::string(kGoodSentence) + "\n{\"index\": 1}\n");
         return "compare " + path + " " + path;
       }},
      {"sentence-scores-counts-out-of-range", 1, "sentence-scores-counts-out-of-range.jsonl:1: counts out of range",
       [=](Workspace& w) {
         const std::string path = w.input(
             ".jsonl", "{\"index\": 0, \"source_tokens\": 3, \"target_tokens\": 4, \"correct\": 5, \"nll\": 1}\n");
         return "compare " + path + " " + path;
       }},
      {"sentence-scores-empty", 1, "sentence-scores-empty.jsonl: no sentences",
       [=](Workspace& w) {
         const std::string path = w.input(".jsonl", "");
         return "compare " + path + " " + path;
       }},
      {"sentence-scores-other-set", 1, "a scores 1 sentences and b 2: the two must score the same set",
       [=](Workspace& w) {
         const std::string one = w.scratch.write("one.jsonl", std::string(kGoodSentence) + "\n");
         return "compare " + one + " " + w.input(".jsonl", std::string(kGoodSentence) + "\n" + kGoodSentence + "\n");
       }},

      // ---- flags (exit 2, the flag named; 1 for values checked once the command runs) ----
      {"flag-unsigned-negative", 2, "--seed: expected a whole number >= 0, got '-1'",
       [=](Workspace& w) { return train(w, "--seed -1"); }},
      {"flag-integer-trailing-text", 2, "--max-steps: expected a whole number, got '12abc'",
       [=](Workspace& w) { return train(w, "--max-steps 12abc"); }},
      {"flag-integer-hex", 2, "--max-tokens: expected a whole number >= 0, got '0x10'",
       [=](Workspace& w) { return train(w, "--max-tokens 0x10"); }},
      {"flag-integer-fraction", 2, "--beam: expected a whole number, got '1.5'",
       [=](Workspace& w) { return "translate --checkpoint " + w.checkpoint + " --beam 1.5"; }},
      {"flag-integer-exponent", 2, "--vocab-size: expected a whole number >= 0, got '1e3'",
       [=](Workspace& w) {
         return "bpe learn --input " + w.fixture + "/train.en --vocab-size 1e3 --output " + w.scratch.file("b.json");
       }},
      {"flag-integer-beyond-64-bits", 2,
       "--max-steps: expected a whole number within 64 bits, got '99999999999999999999'",
       [=](Workspace& w) { return train(w, "--max-steps 99999999999999999999"); }},
      {"flag-integer-list-entry", 2, "--sizes: expected a whole number, got '64x'",
       [=](Workspace&) { return "bench matmul --sizes 32 64x"; }},
      {"flag-lr-nan", 2, "--lr: expected a positive number, got 'nan'",
       [=](Workspace& w) { return train(w, "--lr nan"); }},
      {"flag-lr-inf", 2, "--lr: expected a positive number, got 'inf'",
       [=](Workspace& w) { return train(w, "--lr inf"); }},
      {"flag-k-nan", 2, "--k: expected a finite number, got 'nan'", [=](Workspace& w) { return train(w, "--k nan"); }},
      {"flag-k-minus-inf", 2, "--k: expected a finite number, got '-inf'",
       [=](Workspace& w) { return train(w, "--k -inf"); }},
      {"flag-clip-norm-nan", 2, "--clip-norm: expected a number >= 0, got 'nan'",
       [=](Workspace& w) { return train(w, "--clip-norm nan"); }},
      {"flag-max-minutes-negative", 2, "--max-minutes: expected a number >= 0, got '-1'",
       [=](Workspace& w) { return train(w, "--max-minutes -1"); }},
      {"flag-patience-negative", 2, "--patience: expected a number >= 0, got '-1'",
       [=](Workspace& w) { return train(w, "--patience -1"); }},
      {"flag-label-smoothing-nan", 2, "--label-smoothing: expected a number from 0 to 1, got 'nan'",
       [=](Workspace& w) { return train(w, "--label-smoothing nan"); }},
      {"flag-dropout-nan", 2, "--dropout: expected a number from 0 to 0.99, got 'nan'",
       [=](Workspace& w) { return train(w, "--dropout nan"); }},
      {"flag-vocab-size-negative", 2, "--vocab-size: expected a whole number >= 0, got '-5'",
       [=](Workspace& w) {
         return "bpe learn --input " + w.fixture + "/train.en --vocab-size -5 --output " + w.scratch.file("b.json");
       }},
      {"flag-coverage-nan", 2, "--character-coverage: expected a number from 0 to 1, got 'nan'",
       [=](Workspace& w) {
         return "bpe learn --input " + w.fixture + "/train.en --character-coverage nan --output " +
                w.scratch.file("b.json");
       }},
      {"flag-beam-too-large", 2, "--beam: expected a number from 1 to 256, got '100000'",
       [=](Workspace& w) { return "translate --checkpoint " + w.checkpoint + " --beam 100000"; }},
      {"flag-batch-zero", 2, "--batch: expected a positive number, got '0'",
       [=](Workspace& w) { return "translate --checkpoint " + w.checkpoint + " --batch 0"; }},
      {"flag-length-penalty-nan", 2, "--length-penalty: expected a finite number, got 'nan'",
       [=](Workspace& w) { return "translate --checkpoint " + w.checkpoint + " --length-penalty nan"; }},
      {"flag-max-distance-too-large", 2, "--max-distance: expected a number from 1 to 100000, got '2000000000'",
       [=](Workspace& w) {
         return "inspect --checkpoint " + w.checkpoint + " --out " + w.scratch.file("a.svg") +
                " --max-distance 2000000000";
       }},
      {"flag-file-missing", 2, "--checkpoint: File does not exist: ",
       [=](Workspace& w) { return "translate --checkpoint " + w.scratch.file("nowhere.safetensors"); }},
      {"flag-unknown", 2, "The following argument was not expected: --no-such-flag",
       [=](Workspace& w) { return train(w, "--no-such-flag"); }},
      {"flag-value-missing", 2, "--lr: 1 required", [=](Workspace& w) { return train(w, "--lr"); }},
      {"flag-unknown-scheme", 1, "unknown positional scheme 'gravity'",
       [=](Workspace& w) {
         return "init --pos gravity --vocab " + w.bpe + " --out " + w.scratch.file("x.safetensors");
       }},
      {"flag-unknown-device", 1, "--device: 'tpu' is not a device: use cpu, cuda or cuda:N",
       [=](Workspace& w) { return "translate --device tpu --checkpoint " + w.checkpoint + " < /dev/null"; }},
  };
}

// The cells of a Markdown table row: "| a | b |" -> {"a", "b"} (a "\|" stays inside its cell).
std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += "\\|";
      ++i;
    } else if (line[i] == '|') {
      const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// A message fragment as docs/errors.md writes it in a table cell: in backticks (double ones around a
// fragment that holds one), '|' escaped.
std::string as_table_code(const std::string& fragment) {
  std::string escaped;
  for (char c : fragment) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  return fragment.find('`') == std::string::npos ? "`" + escaped + "`" : "`` " + escaped + " ``";
}

}  // namespace

TEST_CASE("every malformed input of the catalogue ends in its exit status and message", "[cli][errors][catalogue]") {
  Workspace w;
  w.data = agf::test::prepare_tiny_fixture(w.scratch);
  w.bpe = w.scratch.file("bpe.json");
  w.checkpoint = w.scratch.file("good.safetensors");
  REQUIRE(run_agf("init --preset tiny --pos agf-m --vocab " + w.bpe + " --out " + w.checkpoint).status == 0);
  const std::vector<BadInput> cases = catalogue();
  std::set<std::string> names;
  for (const auto& bad : cases) {
    INFO("case " << bad.name);
    CHECK(names.insert(bad.name).second);
    w.current_case = bad.name;
    const std::string arguments = bad.arguments(w);
    const CommandResult result = run_agf(arguments);
    INFO("agf " << arguments << "\n" << result.output);
    CHECK(result.status == bad.status);
    CHECK_THAT(result.output, Catch::Contains(bad.message));
    if (bad.status == 1) CHECK_THAT(result.output, Catch::StartsWith("agf: error: "));
    // Quoted names and values are cut short: no message grows with a hostile input.
    CHECK(result.output.size() < 600);
    if (std::getenv("AGF_PRINT_CATALOGUE")) std::printf("%s\n%s\n", bad.name.c_str(), result.output.c_str());
  }
  CHECK(cases.size() >= 40);
}

TEST_CASE("docs/errors.md lists every case of the catalogue with its exit status and message",
          "[cli][errors][catalogue]") {
  std::ifstream doc(std::string(AGF_SOURCE_DIR) + "/docs/errors.md");
  REQUIRE(doc.good());
  std::map<std::string, std::vector<std::string>> rows;  // case name -> its cells
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| `")) continue;
    const auto cells = table_cells(line);
    REQUIRE(cells.size() == 4);  // case | input | exit | message
    const std::string name = cells[0].substr(1, cells[0].size() - 2);
    INFO(line);
    CHECK(rows.emplace(name, cells).second);
  }
  std::set<std::string> in_catalogue;
  for (const auto& bad : catalogue()) {
    in_catalogue.insert(bad.name);
    INFO("case " << bad.name);
    const auto row = rows.find(bad.name);
    REQUIRE(row != rows.end());
    CHECK(row->second[2] == std::to_string(bad.status));
    CHECK(row->second[3] == as_table_code(bad.message));
  }
  for (const auto& [name, cells] : rows) {
    INFO("docs/errors.md lists '" << name << "', which the catalogue does not hold");
    CHECK(in_catalogue.count(name) == 1);
  }
}
