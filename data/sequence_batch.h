#pragma once
// Where bos and eos are added (SPEC-AGF section 6): datasets store raw BPE ids; a batch turns each pair
// (x, y) into
//   encoder input  = x + [eos]
//   decoder input  = [bos] + y
//   decoder target = y + [eos]
// and pads every row on the right with pad (id 0) to the longest row of its kind in the batch.
// Plain vectors, row-major, so the trainer can wrap them in tensors of its choosing.
#include <cstdint>
#include <span>
#include <vector>

#include "data/token_dataset.h"

namespace agf::data {

std::vector<std::int32_t> encoder_input(std::span<const std::int32_t> source_ids);
std::vector<std::int32_t> decoder_input(std::span<const std::int32_t> target_ids);
std::vector<std::int32_t> decoder_target(std::span<const std::int32_t> target_ids);

struct SequenceBatch {
  std::size_t rows = 0;
  std::size_t source_length = 0;             // columns of encoder_input
  std::size_t target_length = 0;             // columns of decoder_input and decoder_target
  std::vector<std::int32_t> encoder_input;   // rows x source_length
  std::vector<std::int32_t> decoder_input;   // rows x target_length
  std::vector<std::int32_t> decoder_target;  // rows x target_length
  std::size_t target_tokens = 0;             // non-pad entries of decoder_target
};

SequenceBatch make_sequence_batch(const TokenDataset& dataset, std::span<const std::uint32_t> indexes);

}  // namespace agf::data
