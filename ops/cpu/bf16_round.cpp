// ops/cpu/bf16_round.h: bf16(x) and the runs of pair words, in plain C++ and with vcvtne2ps2bf16.
#include "ops/cpu/bf16_round.h"

#include <bit>

#include "core/half.h"

#if defined(__x86_64__)
#include <immintrin.h>
#else
#include "core/error.h"
#endif

namespace agf::ops::cpu {

uint16_t bf16_bits(float x) {
  const uint32_t f = std::bit_cast<uint32_t>(x);
  if ((f & 0x7f800000u) == 0) return static_cast<uint16_t>((f >> 16) & 0x8000u);  // zero or subnormal
  return BFloat16::from_float(x);
}

void round_run(const float* x, int64_t depth, uint32_t* words) {
  for (int64_t p = 0; 2 * p < depth; ++p) {
    const uint32_t odd = 2 * p + 1 < depth ? bf16_bits(x[2 * p + 1]) : 0u;
    words[p] = uint32_t(bf16_bits(x[2 * p])) | odd << 16;
  }
}

void round_pairs(const float* even, const float* odd, int64_t count, uint32_t* words) {
  for (int64_t l = 0; l < count; ++l) {
    words[l] = uint32_t(bf16_bits(even[l])) | (odd != nullptr ? uint32_t(bf16_bits(odd[l])) << 16 : 0u);
  }
}

#if defined(__x86_64__)

namespace {

// The lowest `count` bits set, count <= 16.
__mmask16 first_lanes(int64_t count) { return static_cast<__mmask16>((uint32_t(1) << count) - 1); }

}  // namespace

// 32 floats at a time: vcvtne2ps2bf16(hi, lo) puts bf16(lo) in the lower 16 halves and bf16(hi) in the upper,
// which in memory are x's 32 values in order, that is 16 pair words. A short last run is loaded masked: the
// missing floats are +0, whose bf16 is 0 (an odd depth's last upper half), and only its words are stored.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void round_run_avx512(const float* x, int64_t depth,
                                                                             uint32_t* words) {
  int64_t i = 0;
  for (; i + 32 <= depth; i += 32) {
    const __m512 lo = _mm512_loadu_ps(x + i), hi = _mm512_loadu_ps(x + i + 16);
    _mm512_storeu_si512(words + i / 2, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
  }
  if (i < depth) {
    const int64_t rest = depth - i;  // 1 .. 31
    const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(rest < 16 ? rest : 16), x + i);
    const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(rest > 16 ? rest - 16 : 0), x + i + 16);
    _mm512_mask_storeu_epi32(words + i / 2, first_lanes((rest + 1) / 2), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
  }
}

// 16 words at a time: bf16(even) in halves 0..15 and bf16(odd) in halves 16..31 of one vcvtne2ps2bf16, then
// interleaved (half 2l from half l, half 2l+1 from half 16 + l) by one vpermw.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void round_pairs_avx512(const float* even, const float* odd,
                                                                               int64_t count, uint32_t* words) {
  alignas(64) static constexpr uint16_t kInterleave[32] = {0,  16, 1,  17, 2,  18, 3,  19, 4,  20, 5,
                                                           21, 6,  22, 7,  23, 8,  24, 9,  25, 10, 26,
                                                           11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i interleave = _mm512_load_si512(kInterleave);
  for (int64_t l = 0; l < count; l += 16) {
    const __mmask16 lanes = first_lanes(count - l < 16 ? count - l : 16);
    const __m512 e = _mm512_maskz_loadu_ps(lanes, even + l);
    const __m512 o = odd != nullptr ? _mm512_maskz_loadu_ps(lanes, odd + l) : _mm512_setzero_ps();
    const __m512i halves = (__m512i)_mm512_cvtne2ps_pbh(o, e);
    _mm512_mask_storeu_epi32(words + l, lanes, _mm512_permutexvar_epi16(interleave, halves));
  }
}

#else

void round_run_avx512(const float*, int64_t, uint32_t*) { fail("round_run_avx512: AVX512-BF16 exists on x86-64 only"); }
void round_pairs_avx512(const float*, const float*, int64_t, uint32_t*) {
  fail("round_pairs_avx512: AVX512-BF16 exists on x86-64 only");
}

#endif

}  // namespace agf::ops::cpu
