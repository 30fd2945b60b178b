#pragma once
// The rows of one global batch that process `rank` of `world_size` computes (data-parallel training,
// docs/distributed.md). Every process draws the same global batch from the same sampler; each then takes
// a contiguous range of its rows, the ranges balanced by tokens, so the N processes together see exactly
// the data one process would have seen.
//
// Rows come from the batch sampler in ascending length, so a contiguous range holds rows of near-equal
// length (little padding). Row i, of length l_i, goes to process
//     floor(N · (L_<i + l_i/2) / L)        L_<i: the lengths of the rows before it, L: of all rows
// the process whose share of the tokens holds the row's midpoint. The ranges are contiguous, in rank
// order, and cover the batch; a batch of fewer rows than processes leaves some shards empty.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace agf::data {

// [begin, end): the rows of the batch (with these lengths, in batch order) that `rank` computes.
std::pair<std::size_t, std::size_t> batch_shard(std::span<const std::uint32_t> row_lengths, int rank, int world_size);

}  // namespace agf::data
