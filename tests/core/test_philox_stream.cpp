// PhiloxStream (the CPU's batched Philox: plain C++, AVX2, AVX-512) against Philox4x32::bits, word by word.
#include <catch2/catch.hpp>

#include <vector>

#include "core/philox_stream.h"

namespace {

// Every word of every range, through the given rounds.
template <agf::PhiloxRounds Rounds>
void check_stream() {
  // Seeds with high bits set; offsets whose blocks carry into the counter's high word; starts not on a block
  // or batch boundary; lengths shorter than one block and longer than several batches.
  const std::vector<uint64_t> seeds = {0, 7, 0xDEADBEEFCAFEF00Dull};
  const std::vector<uint64_t> offsets = {0, 3, 0xFFFFFFFFull - 5};
  const std::vector<std::pair<uint64_t, int64_t>> ranges = {{0, 1},  {1, 3},      {5, 64},
                                                            {63, 2}, {130, 1000}, {1ull << 33, 77}};
  for (uint64_t seed : seeds) {
    for (uint64_t offset : offsets) {
      const agf::PhiloxStream stream(seed, offset);
      for (const auto& [first, count] : ranges) {
        std::vector<uint64_t> elements;
        std::vector<uint32_t> words;
        stream.for_each<Rounds>(first, count, [&](uint64_t element, uint32_t bits) {
          elements.push_back(element);
          words.push_back(bits);
        });
        REQUIRE(static_cast<int64_t>(words.size()) == count);
        for (int64_t i = 0; i < count; ++i) {
          INFO("seed " << seed << " offset " << offset << " element " << first + i << " rounds "
                       << static_cast<int>(Rounds));
          REQUIRE(elements[i] == first + static_cast<uint64_t>(i));
          REQUIRE(words[i] == agf::Philox4x32::bits(seed, offset, first + static_cast<uint64_t>(i)));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("PhiloxStream yields Philox4x32::bits for any start and length, by every path the build has",
          "[core][random]") {
  using agf::PhiloxRounds, agf::philox_rounds_built;
  check_stream<PhiloxRounds::plain>();
  if constexpr (philox_rounds_built(PhiloxRounds::avx2)) {
    check_stream<PhiloxRounds::avx2>();
  } else {
    WARN("this build has no AVX2 rounds (AGF_NATIVE=OFF or a processor without AVX2)");
  }
  if constexpr (philox_rounds_built(PhiloxRounds::avx512)) {
    check_stream<PhiloxRounds::avx512>();
  } else {
    WARN("this build has no AVX-512 rounds (AGF_NATIVE=OFF or a processor without AVX-512)");
  }
}
