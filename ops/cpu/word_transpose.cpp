// Transposing blocks of 32-bit words (ops/cpu/word_transpose.h).
#include "ops/cpu/word_transpose.h"

#if defined(__x86_64__)
#include <immintrin.h>
#else
#include "core/error.h"
#endif

namespace agf::ops::cpu {

void transpose_words(const uint32_t* in, int64_t in_stride, int64_t lanes, int64_t count, uint32_t* out,
                     int64_t out_stride) {
  for (int64_t l = 0; l < lanes; ++l) {
    for (int64_t p = 0; p < count; ++p) out[p * out_stride + l] = in[l * in_stride + p];
  }
}

#if defined(__x86_64__)

// 16 × 16 words in r[0..16) (r[l] = lane l's words p0 .. p0+15) transposed in place (r[q] = word q of every
// lane), in three rounds of shuffles. Write a, b, c, d for four consecutive lanes 4i .. 4i+3:
//   1. unpack the 32-bit words of lane pairs:  (a0 b0 a1 b1 | ...), (a2 b2 a3 b3 | ...)
//   2. unpack 64-bit halves of those:          t[4i + j] = (a_j b_j c_j d_j | a_{4+j} ... | a_{8+j} ... | a_{12+j} ...)
//      — in 128-bit block L, word 4L + j of lanes 4i .. 4i+3;
//   3. word 4L + j of all 16 lanes is block L of t[j], t[4+j], t[8+j], t[12+j]: two rounds of 128-bit block
//      shuffles gather them (0x88 takes blocks 0 and 2 of each source, 0xdd blocks 1 and 3).
__attribute__((target("avx512f"))) static void transpose_16x16(__m512i r[16]) {
  __m512i s[16];
  for (int i = 0; i < 16; i += 2) {
    s[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    s[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  __m512i t[16];
  for (int i = 0; i < 16; i += 4) {
    t[i] = _mm512_unpacklo_epi64(s[i], s[i + 2]);
    t[i + 1] = _mm512_unpackhi_epi64(s[i], s[i + 2]);
    t[i + 2] = _mm512_unpacklo_epi64(s[i + 1], s[i + 3]);
    t[i + 3] = _mm512_unpackhi_epi64(s[i + 1], s[i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    // blocks (0, 2) and (1, 3) of lanes 0-3 and 4-7 (u0, u1), of lanes 8-11 and 12-15 (v0, v1)
    const __m512i u0 = _mm512_shuffle_i32x4(t[j], t[4 + j], 0x88), u1 = _mm512_shuffle_i32x4(t[j], t[4 + j], 0xdd);
    const __m512i v0 = _mm512_shuffle_i32x4(t[8 + j], t[12 + j], 0x88);
    const __m512i v1 = _mm512_shuffle_i32x4(t[8 + j], t[12 + j], 0xdd);
    r[j] = _mm512_shuffle_i32x4(u0, v0, 0x88);       // block 0: word j
    r[4 + j] = _mm512_shuffle_i32x4(u1, v1, 0x88);   // block 1: word 4 + j
    r[8 + j] = _mm512_shuffle_i32x4(u0, v0, 0xdd);   // block 2: word 8 + j
    r[12 + j] = _mm512_shuffle_i32x4(u1, v1, 0xdd);  // block 3: word 12 + j
  }
}

__attribute__((target("avx512f"))) void transpose_words_avx512(const uint32_t* in, int64_t in_stride, int64_t lanes,
                                                               int64_t count, uint32_t* out, int64_t out_stride) {
  const __mmask16 lane_mask = static_cast<__mmask16>((1u << lanes) - 1);  // lanes <= 16
  for (int64_t p0 = 0; p0 < count; p0 += 16) {
    const int64_t words = count - p0 < 16 ? count - p0 : 16;
    const __mmask16 word_mask = static_cast<__mmask16>((1u << words) - 1);
    __m512i r[16];
    for (int64_t l = 0; l < 16; ++l) {  // masked loads do not touch the words they leave out
      r[l] = l < lanes ? _mm512_maskz_loadu_epi32(word_mask, in + l * in_stride + p0) : _mm512_setzero_si512();
    }
    transpose_16x16(r);
    for (int64_t q = 0; q < words; ++q) _mm512_mask_storeu_epi32(out + (p0 + q) * out_stride, lane_mask, r[q]);
  }
}

#else

void transpose_words_avx512(const uint32_t*, int64_t, int64_t, int64_t, uint32_t*, int64_t) {
  fail("transpose_words_avx512: AVX-512 exists on x86-64 only");
}

#endif

}  // namespace agf::ops::cpu
