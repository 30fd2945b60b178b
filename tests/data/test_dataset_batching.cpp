// Token datasets (write, memory-map, refuse truncated or foreign files), `agf corpus prepare`, and
// batching invariants: the budget holds, every pair appears once per epoch, orders are seeded and
// resumable.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>

#include "core/error.h"
#include "data/batch_sampler.h"
#include "data/bpe_codec.h"
#include "data/bpe_learn.h"
#include "data/prepare_dataset.h"
#include "data/sequence_batch.h"
#include "data/text_file.h"
#include "data/token_dataset.h"
#include "tests/data/scratch_dir.h"

using namespace agf::data;
using agf::test::ScratchDir;

namespace {
TokenPairs random_pairs(std::size_t count, std::uint32_t seed, int max_length = 30) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> length(0, max_length), id(4, 99);
  TokenPairs pairs;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<std::int32_t> source(static_cast<std::size_t>(length(rng))),
        target(static_cast<std::size_t>(length(rng)));
    for (auto& x : source) x = id(rng);
    for (auto& x : target) x = id(rng);
    pairs.source.push_back(std::move(source));
    pairs.target.push_back(std::move(target));
  }
  return pairs;
}
}  // namespace

TEST_CASE("token dataset: written pairs read back through the memory map", "[data][dataset]") {
  ScratchDir dir;
  const TokenPairs pairs = random_pairs(200, 5);
  write_token_dataset(dir.file("d.bin"), pairs, 0x1234, 100);
  const TokenDataset dataset = TokenDataset::open(dir.file("d.bin"), 0x1234);
  REQUIRE(dataset.size() == 200);
  CHECK(dataset.vocab_size() == 100);
  for (std::size_t i = 0; i < pairs.source.size(); ++i) {
    const auto source = dataset.source(i);
    const auto target = dataset.target(i);
    REQUIRE(std::vector<std::int32_t>(source.begin(), source.end()) == pairs.source[i]);
    REQUIRE(std::vector<std::int32_t>(target.begin(), target.end()) == pairs.target[i]);
  }
  TokenDataset moved = TokenDataset::open(dir.file("d.bin"));
  TokenDataset other = std::move(moved);
  CHECK(other.size() == 200);
}

TEST_CASE("token dataset: truncated, foreign, mismatched or corrupt files are clear errors", "[data][dataset]") {
  ScratchDir dir;
  write_token_dataset(dir.file("d.bin"), random_pairs(20, 6), 0xABCD, 100);
  const std::string bytes = read_file(dir.file("d.bin"));
  CHECK_THROWS_WITH(TokenDataset::open(dir.file("d.bin"), 0x9999), Catch::Contains("another BPE model"));
  dir.write("cut.bin", bytes.substr(0, bytes.size() - 4));
  CHECK_THROWS_WITH(TokenDataset::open(dir.file("cut.bin")),
                    Catch::Contains("cut.bin") && Catch::Contains("truncated"));
  dir.write("tiny.bin", bytes.substr(0, 10));
  CHECK_THROWS_WITH(TokenDataset::open(dir.file("tiny.bin")), Catch::Contains("header"));
  dir.write("foreign.bin", std::string(200, 'x'));
  CHECK_THROWS_WITH(TokenDataset::open(dir.file("foreign.bin")), Catch::Contains("not an agf token dataset"));
  std::string bad_id = bytes;
  bad_id[bad_id.size() - 1] = 0x7F;  // the last id becomes huge
  dir.write("bad_id.bin", bad_id);
  CHECK_THROWS_WITH(TokenDataset::open(dir.file("bad_id.bin")), Catch::Contains("outside the vocabulary"));
  std::string bad_version = bytes;
  bad_version[8] = 9;
  dir.write("version.bin", bad_version);
  CHECK_THROWS_WITH(TokenDataset::open(dir.file("version.bin")), Catch::Contains("version 9"));
  CHECK_THROWS_WITH(TokenDataset::open(dir.file("absent.bin")), Catch::Contains("absent.bin"));
  // random byte flips never crash: each either opens or throws agf::Error
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::string flipped = bytes;
    flipped[rng() % flipped.size()] = static_cast<char>(rng());
    dir.write("flip.bin", flipped);
    try {
      TokenDataset::open(dir.file("flip.bin"));
    } catch (const agf::Error&) {
    }
  }
}

TEST_CASE("batching: budget respected, every pair once per epoch, bucketed", "[data][batching]") {
  std::mt19937 rng(11);
  std::vector<std::uint32_t> lengths(1000);
  for (auto& length : lengths) length = 1 + rng() % 120;
  BatchSamplerOptions options;
  options.max_tokens = 600;
  options.seed = 42;
  const BatchSampler sampler(lengths, options);
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    const auto batches = sampler.epoch_batches(epoch);
    std::vector<int> seen(lengths.size(), 0);
    double padding = 0, slots = 0;
    for (const auto& batch : batches) {
      REQUIRE(!batch.empty());
      std::uint32_t longest = 0;
      for (auto i : batch) longest = std::max(longest, lengths[i]);
      REQUIRE(batch.size() * longest <= options.max_tokens);
      for (auto i : batch) {
        ++seen[i];
        padding += longest - lengths[i];
      }
      slots += double(batch.size()) * longest;
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    CHECK(padding / slots < 0.05);  // bucketing keeps padding small
  }
  CHECK(sampler.epoch_batches(0) != sampler.epoch_batches(1));                         // epochs differ
  CHECK(sampler.epoch_batches(1) == BatchSampler(lengths, options).epoch_batches(1));  // seeded
  options.seed = 43;
  CHECK(sampler.epoch_batches(0) != BatchSampler(lengths, options).epoch_batches(0));
}

TEST_CASE("batching: position resumes exactly, across epochs", "[data][batching]") {
  std::vector<std::uint32_t> lengths;
  for (std::uint32_t i = 0; i < 300; ++i) lengths.push_back(1 + (i * 37) % 50);
  BatchSamplerOptions options;
  options.max_tokens = 200;
  BatchSampler reference(lengths, options);
  std::vector<BatchSampler::Batch> expected;
  for (int step = 0; step < 500; ++step) expected.push_back(reference.next());
  CHECK(reference.position().epoch > 1);
  BatchSampler first(lengths, options);
  for (int step = 0; step < 123; ++step) first.next();
  const BatchPosition saved = first.position();
  BatchSampler resumed(lengths, options);
  resumed.seek(saved);
  for (int step = 123; step < 500; ++step) REQUIRE(resumed.next() == expected[static_cast<std::size_t>(step)]);
  CHECK_THROWS_WITH(resumed.seek({0, 100000}), Catch::Contains("cannot resume"));
  CHECK_THROWS_WITH(BatchSampler({10, 500}, options), Catch::Contains("example 1 has 500 tokens"));
}

TEST_CASE("sequence batch adds eos and bos and pads with pad", "[data][batching]") {
  ScratchDir dir;
  TokenPairs pairs;
  pairs.source = {{10, 11, 12}, {20}};
  pairs.target = {{30}, {40, 41}};
  write_token_dataset(dir.file("s.bin"), pairs, 1, 50);
  const auto dataset = TokenDataset::open(dir.file("s.bin"));
  const std::vector<std::uint32_t> rows = {0, 1};
  const SequenceBatch batch = make_sequence_batch(dataset, rows);
  CHECK(batch.source_length == 4);
  CHECK(batch.target_length == 3);
  CHECK(batch.encoder_input == std::vector<std::int32_t>{10, 11, 12, eos_id, 20, eos_id, pad_id, pad_id});
  CHECK(batch.decoder_input == std::vector<std::int32_t>{bos_id, 30, pad_id, bos_id, 40, 41});
  CHECK(batch.decoder_target == std::vector<std::int32_t>{30, eos_id, pad_id, 40, 41, eos_id});
  CHECK(batch.target_tokens == 5);
  CHECK(encoder_input(dataset.source(1)) == std::vector<std::int32_t>{20, eos_id});
  CHECK(decoder_input(dataset.target(0)) == std::vector<std::int32_t>{bos_id, 30});
  CHECK(decoder_target(dataset.target(0)) == std::vector<std::int32_t>{30, eos_id});
}

TEST_CASE("corpus prepare: encodes, filters with counts, and round-trips through the dataset", "[data][dataset]") {
  ScratchDir dir;
  std::string source = "Hello world\n\nA much much much much much longer line here\nThe cat\n";
  std::string target = "Hallo Welt\nLeer\nEine viel viel viel viel viel längere Zeile hier\nDie Katze\n";
  dir.write("t.en", source);
  dir.write("t.de", target);
  dir.write("v.tsv", "Good day\tGuten Tag\n");
  BpeLearnOptions learn;
  learn.vocab_size = 300;
  std::vector<std::string_view> lines;
  for (auto line : split_lines(source)) lines.push_back(line);
  for (auto line : split_lines(target)) lines.push_back(line);
  const BpeModel model = learn_bpe(lines, learn);
  model.save(dir.file("bpe.json"));
  PrepareOptions options;
  options.max_length = 12;
  const auto reports = prepare_dataset({{"train", dir.file("t.en"), dir.file("t.de"), CorpusFormat::plain},
                                        {"valid", dir.file("v.tsv"), "", CorpusFormat::tsv}},
                                       dir.file("bpe.json"), dir.file("out"), options);
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].read == 4);
  CHECK(reports[0].empty_dropped == 1);
  CHECK(reports[0].too_long_dropped == 1);
  CHECK(reports[0].kept == 2);
  CHECK(reports[1].kept == 1);
  const auto train = TokenDataset::open(dir.file("out/train.bin"), model.hash());
  REQUIRE(train.size() == 2);
  const BpeCodec codec(model);
  CHECK(codec.decode(train.source(0)) == "Hello world");
  CHECK(codec.decode(train.target(1)) == "Die Katze");
  CHECK(read_file(dir.file("out/prepare.json")).find("\"too_long_dropped\": 1") != std::string::npos);

  // the same through the CLI, with a line-count mismatch: exit status 1 and both files named
  dir.write("short.de", "Hallo Welt\n");
  const std::string command = std::string(AGF_BINARY) + " corpus prepare --train-src " + dir.file("t.en") +
                              " --train-tgt " + dir.file("short.de") + " --bpe " + dir.file("bpe.json") + " --out " +
                              dir.file("out2") + " 2> " + dir.file("err.txt");
  const int status = std::system(command.c_str());
  CHECK(WEXITSTATUS(status) == 1);
  const std::string error = read_file(dir.file("err.txt"));
  CHECK(error.find("t.en' has 4 lines") != std::string::npos);
  CHECK(error.find("short.de' has 1 lines") != std::string::npos);

  // a .tsv holds both sides: a --train-tgt beside it would be ignored, so it is refused as a bad flag
  const std::string with_target = std::string(AGF_BINARY) + " corpus prepare --train-src " + dir.file("v.tsv") +
                                  " --train-tgt " + dir.file("t.de") + " --bpe " + dir.file("bpe.json") + " --out " +
                                  dir.file("out3") + " 2> " + dir.file("err.txt");
  CHECK(WEXITSTATUS(std::system(with_target.c_str())) == 2);
  CHECK(read_file(dir.file("err.txt")).find("--train-tgt: not used with a .tsv --train-src") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("out3/train.bin")));

  // --test-src/--test-tgt write the held-out split beside the others (read by agf eval --split test)
  const std::string with_test = std::string(AGF_BINARY) + " corpus prepare --train-src " + dir.file("t.en") +
                                " --train-tgt " + dir.file("t.de") + " --test-src " + dir.file("t.en") +
                                " --test-tgt " + dir.file("t.de") + " --max-length 12 --bpe " + dir.file("bpe.json") +
                                " --out " + dir.file("out4") + " 2> " + dir.file("err.txt");
  CHECK(WEXITSTATUS(std::system(with_test.c_str())) == 0);
  CHECK(TokenDataset::open(dir.file("out4/test.bin"), model.hash()).size() == 2);
  CHECK(read_file(dir.file("out4/prepare.json")).find("\"test\"") != std::string::npos);
  // --test-max-length bounds the test split alone: it keeps the long line the training split drops
  const std::string longer_test = std::string(AGF_BINARY) + " corpus prepare --train-src " + dir.file("t.en") +
                                  " --train-tgt " + dir.file("t.de") + " --test-src " + dir.file("t.en") +
                                  " --test-tgt " + dir.file("t.de") + " --max-length 12 --test-max-length 100 --bpe " +
                                  dir.file("bpe.json") + " --out " + dir.file("out6") + " 2> " + dir.file("err.txt");
  CHECK(WEXITSTATUS(std::system(longer_test.c_str())) == 0);
  CHECK(TokenDataset::open(dir.file("out6/train.bin"), model.hash()).size() == 2);
  CHECK(TokenDataset::open(dir.file("out6/test.bin"), model.hash()).size() == 3);
  CHECK(read_file(dir.file("out6/prepare.json")).find("\"max_length\": 100") != std::string::npos);
  const std::string test_alone = std::string(AGF_BINARY) + " corpus prepare --train-src " + dir.file("t.en") +
                                 " --train-tgt " + dir.file("t.de") + " --test-src " + dir.file("t.en") + " --bpe " +
                                 dir.file("bpe.json") + " --out " + dir.file("out5") + " 2> " + dir.file("err.txt");
  CHECK(WEXITSTATUS(std::system(test_alone.c_str())) == 1);
  CHECK(read_file(dir.file("err.txt")).find("--test-src is given without --test-tgt") != std::string::npos);
}
