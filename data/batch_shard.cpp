#include "data/batch_shard.h"

#include <algorithm>

#include "core/error.h"

namespace agf::data {

std::pair<std::size_t, std::size_t> batch_shard(std::span<const std::uint32_t> row_lengths, int rank, int world_size) {
  AGF_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, "batch_shard: rank {} of a world of {}", rank,
            world_size);
  std::uint64_t total = 0;
  for (std::uint32_t length : row_lengths) total += length;
  // The process of each row, as above, in integers: floor(N · (2·L_<i + l_i) / (2·L)).
  auto owner = [&](std::uint64_t before, std::uint32_t length) {
    if (total == 0) return 0;
    return static_cast<int>(static_cast<unsigned __int128>(world_size) * (2 * before + length) / (2 * total));
  };
  std::size_t begin = row_lengths.size(), end = row_lengths.size();
  std::uint64_t before = 0;
  for (std::size_t row = 0; row < row_lengths.size(); ++row) {
    const int process = owner(before, row_lengths[row]);
    if (process >= rank && begin == row_lengths.size()) begin = row;
    if (process > rank) {
      end = row;
      break;
    }
    before += row_lengths[row];
  }
  return {begin, std::max(begin, end)};
}

}  // namespace agf::data
