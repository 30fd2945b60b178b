#pragma once
// A training batch as tensors: the data layer's SequenceBatch (ids with bos/eos added and right padding,
// data/sequence_batch.h) wrapped for the model.
#include <span>

#include "core/tensor.h"
#include "data/token_dataset.h"

namespace agf::train {

struct Batch {
  Tensor encoder_input;   // [B, Ts] i64: source ids + eos, padded with 0
  Tensor source_lengths;  // [B] i64: non-pad tokens per source row (the encoder's key lengths)
  Tensor decoder_input;   // [B, Tt] i64: bos + target ids, padded
  Tensor decoder_target;  // [B, Tt] i64: target ids + eos, padded with 0 (ignored by the loss)
  int64_t target_tokens = 0;
  int64_t rows() const { return encoder_input.size(0); }
  // The same batch with its tensors on `device` (itself when they are there already).
  Batch to(Device device) const;
};

Batch make_batch(const data::TokenDataset& dataset, std::span<const uint32_t> indexes);

// A batch from already tokenized rows (translation, gradients of given lines).
Batch make_batch(const std::vector<std::vector<int32_t>>& sources, const std::vector<std::vector<int32_t>>& targets);

}  // namespace agf::train
