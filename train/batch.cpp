#include "train/batch.h"

#include <algorithm>

#include "data/bpe_model.h"
#include "data/sequence_batch.h"

namespace agf::train {

namespace {
Tensor ids_tensor(const std::vector<int32_t>& ids, int64_t rows, int64_t columns) {
  std::vector<int64_t> wide(ids.begin(), ids.end());
  return Tensor::from_vector(wide, {rows, columns}, DType::i64);
}

Batch from_sequence_batch(const data::SequenceBatch& sequences) {
  const auto rows = static_cast<int64_t>(sequences.rows);
  const auto source_length = static_cast<int64_t>(sequences.source_length);
  const auto target_length = static_cast<int64_t>(sequences.target_length);
  std::vector<int64_t> lengths(sequences.rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = sequences.encoder_input.data() + r * source_length;
    lengths[r] = std::count_if(row, row + source_length, [](int32_t id) { return id != data::pad_id; });
  }
  Batch batch;
  batch.encoder_input = ids_tensor(sequences.encoder_input, rows, source_length);
  batch.source_lengths = Tensor::from_vector(lengths, {rows}, DType::i64);
  batch.decoder_input = ids_tensor(sequences.decoder_input, rows, target_length);
  batch.decoder_target = ids_tensor(sequences.decoder_target, rows, target_length);
  batch.target_tokens = static_cast<int64_t>(sequences.target_tokens);
  return batch;
}
}  // namespace

Batch Batch::to(Device device) const {
  Batch moved = *this;
  for (Tensor* tensor : {&moved.encoder_input, &moved.source_lengths, &moved.decoder_input, &moved.decoder_target}) {
    *tensor = tensor->to(device);
  }
  return moved;
}

Batch make_batch(const data::TokenDataset& dataset, std::span<const uint32_t> indexes) {
  return from_sequence_batch(data::make_sequence_batch(dataset, indexes));
}

Batch make_batch(const std::vector<std::vector<int32_t>>& sources, const std::vector<std::vector<int32_t>>& targets) {
  AGF_CHECK(sources.size() == targets.size() && !sources.empty(), "make_batch: {} sources and {} targets",
            sources.size(), targets.size());
  data::SequenceBatch sequences;
  sequences.rows = sources.size();
  for (std::size_t r = 0; r < sources.size(); ++r) {
    sequences.source_length = std::max(sequences.source_length, sources[r].size() + 1);
    sequences.target_length = std::max(sequences.target_length, targets[r].size() + 1);
  }
  sequences.encoder_input.assign(sequences.rows * sequences.source_length, data::pad_id);
  sequences.decoder_input.assign(sequences.rows * sequences.target_length, data::pad_id);
  sequences.decoder_target.assign(sequences.rows * sequences.target_length, data::pad_id);
  for (std::size_t r = 0; r < sources.size(); ++r) {
    const auto encoder = data::encoder_input(sources[r]);
    const auto decoder = data::decoder_input(targets[r]);
    const auto target = data::decoder_target(targets[r]);
    std::copy(encoder.begin(), encoder.end(), sequences.encoder_input.begin() + r * sequences.source_length);
    std::copy(decoder.begin(), decoder.end(), sequences.decoder_input.begin() + r * sequences.target_length);
    std::copy(target.begin(), target.end(), sequences.decoder_target.begin() + r * sequences.target_length);
    sequences.target_tokens += target.size();
  }
  return from_sequence_batch(sequences);
}

}  // namespace agf::train
