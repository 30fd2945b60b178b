// The AVX512-BF16 bf16 tile (ops/cpu/bf16_tile.h): vdpbf16ps on 14 × 2 zmm accumulators.
//
// One row pair p of the panels:  b0, b1 = the 32 words of B's row pair (lanes j = 0..15, 16..31);  for each
// row i, the word A[i, 2p..2p+1] broadcast to 16 lanes, and  acc[i][h] = vdpbf16ps(acc[i][h], a_i, b_h),
// which adds A[i, 2p+1]·B[2p+1, j] and then A[i, 2p]·B[2p, j] to each lane j in f32 (Intel's description; the
// instruction treats subnormal bf16 inputs as zero and flushes subnormal results, which is why the packing
// flushes them itself, ops/cpu/bf16_round.h, so that every kernel sees the same operands).
//
// The build uses -march=native on machines without AVX-512, so the function carries its own target; it runs
// only where bf16_avx512_supported() (gemm_bf16.h) says the processor and the OS support AVX512-BF16.
#include "ops/cpu/bf16_tile.h"

#if defined(__x86_64__)
#include <immintrin.h>
#else
#include "core/error.h"
#endif

namespace agf::ops::cpu {

#if defined(__x86_64__)

__attribute__((target("avx512f,avx512bf16"))) void bf16_tile_avx512(int64_t pairs, const uint32_t* a_panel,
                                                                    const uint32_t* b_panel, float* c, int64_t ldc,
                                                                    bool accumulate) {
  constexpr int R = static_cast<int>(kBf16TileRows);
  static_assert(kBf16TileCols == 32, "two zmm of 16 f32 lanes per row");
  __m512 acc[R][2];
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    acc[i][0] = accumulate ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
    acc[i][1] = accumulate ? _mm512_loadu_ps(c + i * ldc + 16) : _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < pairs; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b_panel + p * kBf16TileCols);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b_panel + p * kBf16TileCols + 16);
    const uint32_t* a = a_panel + p * kBf16TileRows;
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      const __m512bh a_i = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[i]));
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], a_i, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], a_i, b1);
    }
  }
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    _mm512_storeu_ps(c + i * ldc, acc[i][0]);
    _mm512_storeu_ps(c + i * ldc + 16, acc[i][1]);
  }
}

#else

void bf16_tile_avx512(int64_t, const uint32_t*, const uint32_t*, float*, int64_t, bool) {
  fail("bf16_tile_avx512: AVX512-BF16 exists on x86-64 only");
}

#endif

}  // namespace agf::ops::cpu
