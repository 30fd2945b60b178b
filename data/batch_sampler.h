#pragma once
// Batches of example indexes under a token budget, with length bucketing and a seeded, resumable order.
//
// Cost of a batch = (examples in it) x (longest example in it), the number of token slots it fills once
// padded; an example's length is max(source + 1, target + 1), the +1 for the eos / bos that
// sequence_batch.h adds. Every batch costs at most `max_tokens`.
//
// Batches of epoch e (deterministic in seed and e):
//   1. shuffle the indexes with seeded_shuffle(seed mixed with e)  (skipped when !shuffle)
//   2. stable-sort them by length: equal lengths stay in shuffled order (bucketing: a batch holds
//      examples of near-equal length, so little is padding)
//   3. cut greedily: add the next example while (count + 1) x its length <= max_tokens
//   4. shuffle the order of the batches with the same generator (skipped when !shuffle)
// Each example is in exactly one batch per epoch. An example longer than max_tokens cannot be placed:
// the constructor refuses it, naming it (filter with `agf corpus prepare --max-length`).
//
// Position: (epoch, batch within the epoch). next() returns the batch at the position and advances,
// rolling into the next epoch; a trainer saves position() in its checkpoint and calls seek() on resume
// to continue with exactly the batch that would have come next.
#include <cstdint>
#include <vector>

#include "data/token_dataset.h"

namespace agf::data {

struct BatchPosition {
  std::uint64_t epoch = 0;
  std::uint64_t batch = 0;
  bool operator==(const BatchPosition&) const = default;
};

struct BatchSamplerOptions {
  std::uint64_t max_tokens = 4096;
  std::uint64_t seed = 1;
  bool shuffle = true;  // false: length-sorted, in the same order every epoch (for evaluation)
};

class BatchSampler {
 public:
  using Batch = std::vector<std::uint32_t>;

  BatchSampler(std::vector<std::uint32_t> lengths, const BatchSamplerOptions& options);
  // Lengths from a dataset: max(source + 1, target + 1) per pair.
  static BatchSampler for_dataset(const TokenDataset& dataset, const BatchSamplerOptions& options);

  std::vector<Batch> epoch_batches(std::uint64_t epoch) const;

  // The batch at position() (valid until the next call), then advances.
  const Batch& next();
  BatchPosition position() const { return position_; }
  void seek(BatchPosition position);
  // Batches in the current epoch (computing it if needed).
  std::size_t batches_in_epoch();

  const std::vector<std::uint32_t>& lengths() const { return lengths_; }

 private:
  void load_epoch(std::uint64_t epoch);

  std::vector<std::uint32_t> lengths_;
  BatchSamplerOptions options_;
  BatchPosition position_;
  std::uint64_t loaded_epoch_ = UINT64_MAX;
  std::vector<Batch> batches_;
};

}  // namespace agf::data
