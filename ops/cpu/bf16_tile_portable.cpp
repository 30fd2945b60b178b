// The portable bf16 tile (ops/cpu/bf16_tile.h): the arithmetic contract in plain C++.
#include <bit>

#include "ops/cpu/bf16_tile.h"

namespace agf::ops::cpu {

namespace {

// The bf16 value in the lower (even k) or upper (odd k) half of a word, as f32: bf16 is the top half of an f32.
inline float even_of(uint32_t word) { return std::bit_cast<float>(word << 16); }
inline float odd_of(uint32_t word) { return std::bit_cast<float>(word & 0xffff0000u); }

}  // namespace

void bf16_tile_portable(int64_t pairs, const uint32_t* a_panel, const uint32_t* b_panel, float* c, int64_t ldc,
                        bool accumulate) {
  constexpr int64_t R = kBf16TileRows, N = kBf16TileCols;
  float acc[R][N];
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < N; ++j) acc[i][j] = accumulate ? c[i * ldc + j] : 0.0f;
  for (int64_t p = 0; p < pairs; ++p) {
    const uint32_t* a = a_panel + p * R;
    const uint32_t* b = b_panel + p * N;
    for (int64_t i = 0; i < R; ++i) {
      const float a_odd = odd_of(a[i]), a_even = even_of(a[i]);
      for (int64_t j = 0; j < N; ++j) {
        acc[i][j] += a_odd * odd_of(b[j]);    // A[i, 2p+1]·B[2p+1, j], exact, then one rounding
        acc[i][j] += a_even * even_of(b[j]);  // A[i, 2p]·B[2p, j]
      }
    }
  }
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < N; ++j) c[i * ldc + j] = acc[i][j];
}

}  // namespace agf::ops::cpu
