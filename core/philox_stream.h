#pragma once
// Consecutive words of a Philox stream (core/philox.h) at memory speed, for CPU loops: the same words as
// Philox4x32::bits(seed, offset, e) for e = first, first + 1, ..., but each 10-round block computed once
// for its four words (not once per word), and kLanes blocks side by side: all 16 in AVX-512 registers where
// the build targets AVX-512 (the words then leave the registers already in stream order), 8 at a time in AVX2
// registers where it targets AVX2 (32×32→64-bit multiplies: vpmuludq), lane by lane in plain C++ otherwise.
// tests/core/test_philox_stream.cpp checks every path the build has against Philox4x32::bits.
#include <algorithm>
#include <cstdint>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/philox.h"

namespace agf {

// How a batch's rounds are computed: each path gives the same words.
enum class PhiloxRounds { plain, avx2, avx512 };

// The paths this build has, and the fastest of them.
constexpr bool philox_rounds_built(PhiloxRounds rounds) {
  switch (rounds) {
    case PhiloxRounds::plain: return true;
#ifdef __AVX2__
    case PhiloxRounds::avx2: return true;
#endif
#ifdef __AVX512F__
    case PhiloxRounds::avx512: return true;
#endif
    default: return false;
  }
}
inline constexpr PhiloxRounds kBestPhiloxRounds = philox_rounds_built(PhiloxRounds::avx512) ? PhiloxRounds::avx512
                                                  : philox_rounds_built(PhiloxRounds::avx2) ? PhiloxRounds::avx2
                                                                                            : PhiloxRounds::plain;

class PhiloxStream {
 public:
  static constexpr int64_t kLanes = 16;          // blocks per batch
  static constexpr int64_t kWords = 4 * kLanes;  // words per batch

  PhiloxStream(uint64_t seed, uint64_t offset) : seed_(seed), offset_(offset) {}

  // Calls visit(e, bits) for e in [first, first + count), in order, with bits = Philox4x32::bits(seed, offset, e).
  // Rounds other than kBestPhiloxRounds are for the tests.
  template <PhiloxRounds Rounds = kBestPhiloxRounds, class Visit>
  void for_each(uint64_t first, int64_t count, Visit&& visit) const {
    static_assert(philox_rounds_built(Rounds), "PhiloxStream: this build has no such rounds");
    alignas(64) uint32_t words[kWords];
    uint64_t element = first;
    const uint64_t end = first + static_cast<uint64_t>(count);
    while (element < end) {
      const uint64_t block = element / 4;  // the batch starts at the block holding `element`
      fill_batch<Rounds>(block, words);
      const uint64_t batch_first = block * 4;
      const uint64_t batch_end = std::min(end, batch_first + kWords);
      for (; element < batch_end; ++element) visit(element, words[element - batch_first]);
    }
  }

 private:
  // words[4·i + lane] = lane `lane` of block offset + block + i, for i < kLanes.
  template <PhiloxRounds Rounds>
  void fill_batch(uint64_t block, uint32_t* words) const {
#ifdef __AVX512F__
    if constexpr (Rounds == PhiloxRounds::avx512) {
      fill_batch_avx512(block, words);
      return;
    }
#endif
    uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) {
      const uint64_t counter = offset_ + block + static_cast<uint64_t>(i);
      c0[i] = static_cast<uint32_t>(counter);
      c1[i] = static_cast<uint32_t>(counter >> 32);
      c2[i] = 0;
      c3[i] = 0;
    }
    if constexpr (Rounds == PhiloxRounds::avx2) {
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

#ifdef __AVX512F__
  // fill_batch with the 16 blocks in one register per word: the counters made in registers, the rounds as in
  // rounds_avx2, and the words stored in stream order by a 4 × 16 transpose in registers (vector stores that the
  // visitor's vector loads can forward from, where 64 single-word stores made them wait).
  void fill_batch_avx512(uint64_t block, uint32_t* words) const {
    // counter i = offset + block + i; c0 = its low words, c1 = its high words (even and odd 32-bit lanes)
    const __m512i first8 = _mm512_add_epi64(_mm512_set1_epi64(static_cast<int64_t>(offset_ + block)),
                                            _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    const __m512i next8 = _mm512_add_epi64(first8, _mm512_set1_epi64(8));
    const __m512i even_words = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    __m512i c0 = _mm512_permutex2var_epi32(first8, even_words, next8);
    __m512i c1 = _mm512_permutex2var_epi32(first8, _mm512_add_epi32(even_words, _mm512_set1_epi32(1)), next8);
    __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
    const __m512i m0 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kMultiplier0));
    const __m512i m1 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kMultiplier1));
    // hi and lo words of x·multiplier per 32-bit lane: vpmuludq on the even lanes and on the odd ones shifted down
    const auto multiply = [](__m512i x, __m512i multiplier, __m512i& hi, __m512i& lo) {
      const __m512i even = _mm512_mul_epu32(x, multiplier);
      const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), multiplier);
      hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
      lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
    };
    uint32_t key0 = static_cast<uint32_t>(seed_), key1 = static_cast<uint32_t>(seed_ >> 32);
    for (int round = 0; round < 10; ++round) {
      __m512i hi0, lo0, hi1, lo1;
      multiply(c0, m0, hi0, lo0);
      multiply(c2, m1, hi1, lo1);
      c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(static_cast<int>(key0)));
      c1 = lo1;
      c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(static_cast<int>(key1)));
      c3 = lo0;
      key0 += Philox4x32::kWeyl0;
      key1 += Philox4x32::kWeyl1;
    }
    // In each 128-bit lane j (blocks 4j..4j+3): r_b = the four words of block 4j + b.
    const __m512i c01_low = _mm512_unpacklo_epi32(c0, c1), c01_high = _mm512_unpackhi_epi32(c0, c1);
    const __m512i c23_low = _mm512_unpacklo_epi32(c2, c3), c23_high = _mm512_unpackhi_epi32(c2, c3);
    const __m512i r0 = _mm512_unpacklo_epi64(c01_low, c23_low), r1 = _mm512_unpackhi_epi64(c01_low, c23_low);
    const __m512i r2 = _mm512_unpacklo_epi64(c01_high, c23_high), r3 = _mm512_unpackhi_epi64(c01_high, c23_high);
    // Output j = blocks 4j..4j+3 = lane j of r0, r1, r2, r3.
    const __m512i r01_front = _mm512_shuffle_i32x4(r0, r1, 0x44), r23_front = _mm512_shuffle_i32x4(r2, r3, 0x44);
    const __m512i r01_back = _mm512_shuffle_i32x4(r0, r1, 0xEE), r23_back = _mm512_shuffle_i32x4(r2, r3, 0xEE);
    _mm512_store_si512(words, _mm512_shuffle_i32x4(r01_front, r23_front, 0x88));
    _mm512_store_si512(words + 16, _mm512_shuffle_i32x4(r01_front, r23_front, 0xDD));
    _mm512_store_si512(words + 32, _mm512_shuffle_i32x4(r01_back, r23_back, 0x88));
    _mm512_store_si512(words + 48, _mm512_shuffle_i32x4(r01_back, r23_back, 0xDD));
  }
#endif

  uint64_t seed_, offset_;
};

}  // namespace agf
