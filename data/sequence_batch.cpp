#include "data/sequence_batch.h"

#include <algorithm>

#include "core/error.h"
#include "data/bpe_model.h"

namespace agf::data {

std::vector<std::int32_t> encoder_input(std::span<const std::int32_t> source_ids) {
  std::vector<std::int32_t> out(source_ids.begin(), source_ids.end());
  out.push_back(eos_id);
  return out;
}

std::vector<std::int32_t> decoder_input(std::span<const std::int32_t> target_ids) {
  std::vector<std::int32_t> out;
  out.reserve(target_ids.size() + 1);
  out.push_back(bos_id);
  out.insert(out.end(), target_ids.begin(), target_ids.end());
  return out;
}

std::vector<std::int32_t> decoder_target(std::span<const std::int32_t> target_ids) {
  std::vector<std::int32_t> out(target_ids.begin(), target_ids.end());
  out.push_back(eos_id);
  return out;
}

SequenceBatch make_sequence_batch(const TokenDataset& dataset, std::span<const std::uint32_t> indexes) {
  SequenceBatch batch;
  batch.rows = indexes.size();
  for (std::uint32_t i : indexes) {
    AGF_CHECK(i < dataset.size(), "batch: example {} is outside the dataset '{}' ({} pairs)", i, dataset.path(),
              dataset.size());
    batch.source_length = std::max(batch.source_length, dataset.source(i).size() + 1);
    batch.target_length = std::max(batch.target_length, dataset.target(i).size() + 1);
  }
  batch.encoder_input.assign(batch.rows * batch.source_length, pad_id);
  batch.decoder_input.assign(batch.rows * batch.target_length, pad_id);
  batch.decoder_target.assign(batch.rows * batch.target_length, pad_id);
  for (std::size_t row = 0; row < batch.rows; ++row) {
    const auto source = dataset.source(indexes[row]);
    const auto target = dataset.target(indexes[row]);
    std::int32_t* encoder = &batch.encoder_input[row * batch.source_length];
    std::copy(source.begin(), source.end(), encoder);
    encoder[source.size()] = eos_id;
    std::int32_t* decoder = &batch.decoder_input[row * batch.target_length];
    decoder[0] = bos_id;
    std::copy(target.begin(), target.end(), decoder + 1);
    std::int32_t* goal = &batch.decoder_target[row * batch.target_length];
    std::copy(target.begin(), target.end(), goal);
    goal[target.size()] = eos_id;
    batch.target_tokens += target.size() + 1;
  }
  return batch;
}

}  // namespace agf::data
