// data/batch_shard.h: the rows of a global batch each process of a distributed run computes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "data/batch_shard.h"

TEST_CASE("a batch is split into contiguous shards balanced by tokens", "[data][distributed]") {
  using agf::data::batch_shard;
  const std::vector<uint32_t> lengths{3, 3, 4, 4, 5, 6, 8, 9};  // ascending, as the sampler cuts them
  for (int world_size = 1; world_size <= 10; ++world_size) {
    INFO("world of " << world_size);
    std::size_t next = 0;
    uint64_t largest = 0, total = 0;
    for (int rank = 0; rank < world_size; ++rank) {
      const auto [begin, end] = batch_shard(lengths, rank, world_size);
      CHECK(begin == next);  // contiguous, in rank order
      CHECK(end >= begin);
      next = end;
      uint64_t tokens = 0;
      for (std::size_t row = begin; row < end; ++row) tokens += lengths[row];
      largest = std::max(largest, tokens);
      total += tokens;
    }
    CHECK(next == lengths.size());  // every row once
    CHECK(total == 42);
    // No shard holds more than its share by more than one row (the longest is 9 tokens).
    CHECK(largest <= static_cast<uint64_t>(42 / world_size + 9));
  }
  // Two processes: 21 tokens each ideally; the midpoints put rows 0-4 (19) and 5-7 (23) apart.
  CHECK(batch_shard(lengths, 0, 2) == std::pair<std::size_t, std::size_t>{0, 5});
  CHECK(batch_shard(lengths, 1, 2) == std::pair<std::size_t, std::size_t>{5, 8});
  // Fewer rows than processes: some shards are empty, and every row still has one.
  const std::vector<uint32_t> one_row{7};
  CHECK(batch_shard(one_row, 0, 2).first == batch_shard(one_row, 0, 2).second);
  CHECK(batch_shard(one_row, 1, 2) == std::pair<std::size_t, std::size_t>{0, 1});
  CHECK_THROWS_WITH(batch_shard(lengths, 2, 2), Catch::Contains("rank 2 of a world of 2"));
}
