#include "data/batch_sampler.h"

#include <algorithm>

#include "core/error.h"
#include "data/seeded_shuffle.h"

namespace agf::data {

BatchSampler::BatchSampler(std::vector<std::uint32_t> lengths, const BatchSamplerOptions& options)
    : lengths_(std::move(lengths)), options_(options) {
  AGF_CHECK(options_.max_tokens > 0, "batching: --max-tokens must be positive");
  for (std::size_t i = 0; i < lengths_.size(); ++i) {
    AGF_CHECK(lengths_[i] <= options_.max_tokens,
              "batching: example {} has {} tokens (eos/bos included), more than --max-tokens {}; drop long pairs "
              "with `agf corpus prepare --max-length` or raise --max-tokens",
              i, lengths_[i], options_.max_tokens);
  }
}

BatchSampler BatchSampler::for_dataset(const TokenDataset& dataset, const BatchSamplerOptions& options) {
  std::vector<std::uint32_t> lengths(dataset.size());
  for (std::size_t i = 0; i < dataset.size(); ++i) {
    lengths[i] = static_cast<std::uint32_t>(std::max(dataset.source(i).size(), dataset.target(i).size()) + 1);
  }
  return BatchSampler(std::move(lengths), options);
}

std::vector<BatchSampler::Batch> BatchSampler::epoch_batches(std::uint64_t epoch) const {
  std::vector<std::uint32_t> order(lengths_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  // one generator seed per epoch: SplitMix64 of (seed, epoch) keeps epochs' orders unrelated
  const std::uint64_t epoch_seed = SplitMix64(options_.seed ^ (0x9E3779B97F4A7C15ull * (epoch + 1))).next();
  if (options_.shuffle) seeded_shuffle(order, epoch_seed);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return lengths_[a] < lengths_[b]; });
  std::vector<Batch> batches;
  Batch current;
  for (std::uint32_t index : order) {
    // ascending lengths: the newcomer is the longest so far
    if (!current.empty() && (current.size() + 1) * lengths_[index] > options_.max_tokens) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.push_back(index);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  if (options_.shuffle) seeded_shuffle(batches, epoch_seed + 1);
  return batches;
}

void BatchSampler::load_epoch(std::uint64_t epoch) {
  if (loaded_epoch_ == epoch) return;
  batches_ = epoch_batches(epoch);
  loaded_epoch_ = epoch;
}

std::size_t BatchSampler::batches_in_epoch() {
  load_epoch(position_.epoch);
  return batches_.size();
}

const BatchSampler::Batch& BatchSampler::next() {
  AGF_CHECK(!lengths_.empty(), "batching: the dataset is empty");
  load_epoch(position_.epoch);
  if (position_.batch >= batches_.size()) {
    position_ = {position_.epoch + 1, 0};
    load_epoch(position_.epoch);
  }
  return batches_[position_.batch++];
}

void BatchSampler::seek(BatchPosition position) {
  load_epoch(position.epoch);
  AGF_CHECK(position.batch <= batches_.size(), "batching: cannot resume at batch {} of epoch {}, which has {} batches",
            position.batch, position.epoch, batches_.size());
  position_ = position;
}

}  // namespace agf::data
