// The AMX-BF16 bf16 tile (ops/cpu/bf16_tile.h): tdpbf16ps on four 16 × 16 f32 tile registers, a 32 × 32 tile of C.
//
// Tile registers (ldtilecfg, palette 1), each 16 rows of 64 bytes:
//   tmm0 tmm1      C[0..15,  0..15]   C[0..15,  16..31]          f32
//   tmm2 tmm3      C[16..31, 0..15]   C[16..31, 16..31]
//   tmm4 tmm5      A's rows 0..15 and 16..31, 16 pairs each       a row of pair words (the row layout)
//   tmm6 tmm7      B's columns 0..15 and 16..31, 16 pairs         a row per pair (the panel layout)
// For each 16 pairs: 4 tile loads and 4 tdpbf16ps, each of which adds, for every row i and column j of its C
// tile, A[i, 2p]·B[2p, j] and A[i, 2p+1]·B[2p+1, j] over its 16 pairs p, in f32 (Intel's description: the even
// element first; the instruction reads subnormal inputs as zero and flushes subnormal results, rounds to nearest
// even). So the order within a pair may differ from the contract's (odd first): the tests hold this kernel to the
// f32 accumulation bound and report how often it equals the contract bit for bit.
//
// Linux gives a process the tile registers only after arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), which
// bf16_amx_supported() (gemm_bf16.h) asks for once; each thread of a product loads the configuration before its
// first tile and releases the tiles after its last (the driver calls both), so that nothing is assumed of the
// tile state between products and an idle thread holds no tile data.
#include "ops/cpu/bf16_tile.h"

#if defined(__x86_64__)
#include <immintrin.h>
#else
#include "core/error.h"
#endif

namespace agf::ops::cpu {

#if defined(__x86_64__)

namespace {

// The 64-byte operand of ldtilecfg: palette 1, then each tile's bytes per row and rows.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

constexpr TileConfig sixteen_by_64_bytes() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.bytes_per_row[t] = 64, config.rows[t] = 16;
  return config;
}

// In static memory: GCC's _tile_loadconfig names only the first 8 bytes of its operand as read, so a configuration
// built on the stack just before it can lose its stores (it did: tilezero then faulted).
constexpr TileConfig kTileConfig = sixteen_by_64_bytes();

}  // namespace

__attribute__((target("amx-tile"))) void bf16_amx_configure_tiles() { _tile_loadconfig(&kTileConfig); }

__attribute__((target("amx-tile"))) void bf16_amx_release_tiles() { _tile_release(); }

__attribute__((target("amx-tile,amx-bf16"))) void
bf16_tile_amx(int64_t pairs, const uint32_t* a_panel, const uint32_t* b_panel, float* c, int64_t ldc, bool accumulate) {
  static_assert(kBf16AmxTileRows == 32 && kBf16TileCols == 32 && kBf16AmxPairMultiple == 16,
                "2 × 2 tiles of 16 × 16 f32, 16 pairs (64 bytes) per row of A and per tile of B");
  const int64_t c_stride = ldc * static_cast<int64_t>(sizeof(float));
  float* c10 = c + 16 * ldc;
  if (accumulate) {
    _tile_loadd(0, c, c_stride);
    _tile_loadd(1, c + 16, c_stride);
    _tile_loadd(2, c10, c_stride);
    _tile_loadd(3, c10 + 16, c_stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  const int64_t a_stride = pairs * static_cast<int64_t>(sizeof(uint32_t));  // a row of A: `pairs` words
  constexpr int64_t b_stride = kBf16TileCols * sizeof(uint32_t);            // a pair of B: 32 words
  for (int64_t p = 0; p < pairs; p += kBf16AmxPairMultiple) {
    _tile_loadd(4, a_panel + p, a_stride);
    _tile_loadd(5, a_panel + 16 * pairs + p, a_stride);
    _tile_loadd(6, b_panel + p * kBf16TileCols, b_stride);
    _tile_loadd(7, b_panel + p * kBf16TileCols + 16, b_stride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, c_stride);
  _tile_stored(1, c + 16, c_stride);
  _tile_stored(2, c10, c_stride);
  _tile_stored(3, c10 + 16, c_stride);
}

#else

void bf16_tile_amx(int64_t, const uint32_t*, const uint32_t*, float*, int64_t, bool) {
  fail("bf16_tile_amx: AMX exists on x86-64 only");
}
void bf16_amx_configure_tiles() { fail("bf16_amx_configure_tiles: AMX exists on x86-64 only"); }
void bf16_amx_release_tiles() { fail("bf16_amx_release_tiles: AMX exists on x86-64 only"); }

#endif

}  // namespace agf::ops::cpu
