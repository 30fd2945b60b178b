#pragma once
// A shuffle that gives the same order on every platform and standard library (std::shuffle and
// std::uniform_int_distribution are implementation-defined, so corpora splits and batch orders built
// on them could differ between machines).
//
//   generator: SplitMix64 (Steele, Lea, Flood 2014): state += 0x9E3779B97F4A7C15; z = state;
//              z = (z ^ z>>30) * 0xBF58476D1CE4E5B9; z = (z ^ z>>27) * 0x94D049BB133111EB; z ^ z>>31
//   bounded:   uniform in [0, n) by rejection: draw x, reject while x >= 2^64 - (2^64 mod n), return x mod n
//   shuffle:   Fisher-Yates from the back: for i = n-1 .. 1, swap(v[i], v[uniform(i+1)])
#include <cstdint>
#include <utility>
#include <vector>

namespace agf::data {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t uniform(std::uint64_t n) {  // n > 0
    const std::uint64_t limit = -n % n;     // 2^64 mod n: the first `limit` values would bias the result
    std::uint64_t x = next();
    while (x < limit) x = next();
    return x % n;
  }

 private:
  std::uint64_t state_;
};

template <class T>
void seeded_shuffle(std::vector<T>& items, std::uint64_t seed) {
  SplitMix64 rng(seed);
  for (std::size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[rng.uniform(i)]);
  }
}

}  // namespace agf::data
