#pragma once
// `agf corpus prepare`: parallel text -> BPE ids -> a token dataset file, with the filtering counted.
//
// For each split: read the pairs (parallel_corpus.h), drop pairs with an empty side, encode both sides
// (multithreaded), drop pairs where a side has more than `max_length` BPE ids (bos/eos not counted;
// `test_max_length` for the test split, so it can hold longer pairs than training sees: a test of length
// extrapolation), and write OUT/{split}.bin (token_dataset.h). The model is copied to OUT/bpe.json and the counts go
// to OUT/prepare.json, so a training run can check what it is given.
#include <optional>
#include <string>
#include <vector>

#include "data/bpe_model.h"
#include "data/parallel_corpus.h"

namespace agf::data {

struct SplitFiles {
  std::string name;  // "train", "valid", ...
  std::string source, target;
  CorpusFormat format = CorpusFormat::plain;
};

struct PrepareOptions {
  std::size_t max_length = 250;
  std::optional<std::size_t> test_max_length;  // the test split's bound; unset: max_length
  bool skip_invalid = false;
};

struct SplitReport {
  std::string name;
  std::size_t max_length = 0;  // the bound this split was filtered with
  std::size_t read = 0, invalid_skipped = 0, empty_dropped = 0, too_long_dropped = 0, kept = 0;
  std::size_t source_tokens = 0, target_tokens = 0;
};

std::vector<SplitReport> prepare_dataset(const std::vector<SplitFiles>& splits, const std::string& model_path,
                                         const std::string& out_dir, const PrepareOptions& options);

}  // namespace agf::data
