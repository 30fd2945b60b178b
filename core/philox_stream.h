#pragma once
// Consecutive words of a Philox stream (core/philox.h) at memory speed, for CPU loops: the same words as
// Philox4x32::bits(seed, offset, e) for e = first, first + 1, ..., but each 10-round block computed once
// for its four words (not once per word), and kLanes blocks side by side: 8 at a time in AVX2 registers
// where the build targets AVX2 (32×32→64-bit multiplies: vpmuludq), lane by lane in plain C++ otherwise.
// tests/core/test_philox_stream.cpp checks both paths the build has against Philox4x32::bits.
#include <algorithm>
#include <cstdint>
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/philox.h"

namespace agf {

class PhiloxStream {
 public:
  static constexpr int64_t kLanes = 16;          // blocks per batch
  static constexpr int64_t kWords = 4 * kLanes;  // words per batch

#ifdef __AVX2__
  static constexpr bool kHasSimd = true;
#else
  static constexpr bool kHasSimd = false;
#endif

  PhiloxStream(uint64_t seed, uint64_t offset) : seed_(seed), offset_(offset) {}

  // Calls visit(e, bits) for e in [first, first + count), in order, with bits = Philox4x32::bits(seed, offset, e).
  // Simd = false takes the plain C++ rounds even where AVX2 is there (for the tests).
  template <bool Simd = kHasSimd, class Visit>
  void for_each(uint64_t first, int64_t count, Visit&& visit) const {
    static_assert(kHasSimd || !Simd, "PhiloxStream: this build has no AVX2 rounds");
    uint32_t words[kWords];
    uint64_t element = first;
    const uint64_t end = first + static_cast<uint64_t>(count);
    while (element < end) {
      const uint64_t block = element / 4;  // the batch starts at the block holding `element`
      fill_batch<Simd>(block, words);
      const uint64_t batch_first = block * 4;
      const uint64_t batch_end = std::min(end, batch_first + kWords);
      for (; element < batch_end; ++element) visit(element, words[element - batch_first]);
    }
  }

 private:
  // words[4·i + lane] = lane `lane` of block offset + block + i, for i < kLanes.
  template <bool Simd>
  void fill_batch(uint64_t block, uint32_t* words) const {
    uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) {
      const uint64_t counter = offset_ + block + static_cast<uint64_t>(i);
      c0[i] = static_cast<uint32_t>(counter);
      c1[i] = static_cast<uint32_t>(counter >> 32);
      c2[i] = 0;
      c3[i] = 0;
    }
    if constexpr (Simd) {
#ifdef __AVX2__
      for (int64_t i = 0; i < kLanes; i += 8) rounds_avx2(c0 + i, c1 + i, c2 + i, c3 + i);
#endif
    } else {
      rounds_scalar(c0, c1, c2, c3);
    }
    for (int64_t i = 0; i < kLanes; ++i) {
      words[4 * i + 0] = c0[i];
      words[4 * i + 1] = c1[i];
      words[4 * i + 2] = c2[i];
      words[4 * i + 3] = c3[i];
    }
  }

  // Philox4x32::generate on kLanes counters, one lane per block.
  void rounds_scalar(uint32_t* c0, uint32_t* c1, uint32_t* c2, uint32_t* c3) const {
    uint32_t key0 = static_cast<uint32_t>(seed_), key1 = static_cast<uint32_t>(seed_ >> 32);
    for (int round = 0; round < 10; ++round) {
      for (int64_t i = 0; i < kLanes; ++i) {
        const uint64_t product0 = static_cast<uint64_t>(Philox4x32::kMultiplier0) * c0[i];
        const uint64_t product1 = static_cast<uint64_t>(Philox4x32::kMultiplier1) * c2[i];
        const uint32_t hi0 = static_cast<uint32_t>(product0 >> 32), lo0 = static_cast<uint32_t>(product0);
        const uint32_t hi1 = static_cast<uint32_t>(product1 >> 32), lo1 = static_cast<uint32_t>(product1);
        const uint32_t next0 = hi1 ^ c1[i] ^ key0, next2 = hi0 ^ c3[i] ^ key1;
        c0[i] = next0;
        c1[i] = lo1;
        c2[i] = next2;
        c3[i] = lo0;
      }
      key0 += Philox4x32::kWeyl0;
      key1 += Philox4x32::kWeyl1;
    }
  }

#ifdef __AVX2__
  // The same rounds on 8 blocks in AVX2 registers. _mm256_mul_epu32 multiplies the even 32-bit lanes into
  // 64-bit products; the odd lanes are shifted down and multiplied likewise, and the halves blended back.
  struct WideProduct {
    __m256i hi, lo;
  };
  static WideProduct multiply(__m256i x, __m256i multiplier) {
    const __m256i even = _mm256_mul_epu32(x, multiplier);
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), multiplier);
    return {_mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA),
            _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA)};
  }

  void rounds_avx2(uint32_t* c0p, uint32_t* c1p, uint32_t* c2p, uint32_t* c3p) const {
    auto load = [](const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
    __m256i c0 = load(c0p), c1 = load(c1p), c2 = load(c2p), c3 = load(c3p);
    const __m256i m0 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kMultiplier0));
    const __m256i m1 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kMultiplier1));
    uint32_t key0 = static_cast<uint32_t>(seed_), key1 = static_cast<uint32_t>(seed_ >> 32);
    for (int round = 0; round < 10; ++round) {
      const WideProduct p0 = multiply(c0, m0), p1 = multiply(c2, m1);
      c0 = _mm256_xor_si256(_mm256_xor_si256(p1.hi, c1), _mm256_set1_epi32(static_cast<int>(key0)));
      c1 = p1.lo;
      c2 = _mm256_xor_si256(_mm256_xor_si256(p0.hi, c3), _mm256_set1_epi32(static_cast<int>(key1)));
      c3 = p0.lo;
      key0 += Philox4x32::kWeyl0;
      key1 += Philox4x32::kWeyl1;
    }
    auto store = [](uint32_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); };
    store(c0p, c0);
    store(c1p, c1);
    store(c2p, c2);
    store(c3p, c3);
  }
#endif

  uint64_t seed_, offset_;
};

}  // namespace agf
