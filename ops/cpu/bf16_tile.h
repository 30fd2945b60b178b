#pragma once
// The innermost step of the bf16 GEMM (ops/cpu/gemm_bf16.h): one tile of C, kBf16TileRows × kBf16TileCols
// (kBf16AmxTileRows × kBf16TileCols for AMX), from two packed panels of bf16 pairs. One function per instruction set, each in its own file; the driver
// (gemm_bf16.cpp) packs, blocks and parallelises around whichever one it runs.
//
// Panels. k is padded to an even length K = 2·pairs with zeros, and each 32-bit word holds two bf16 values
// of consecutive k, the lower half the even one:
//
//   a_panel[p·R + i] = bf16(A[i, 2p]) | bf16(A[i, 2p+1]) << 16      p < pairs, i < R = kBf16TileRows
//   b_panel[p·N + j] = bf16(B[2p, j]) | bf16(B[2p+1, j]) << 16      p < pairs, j < N = kBf16TileCols
//
// (rows past A's last and columns past B's last are zeros too). This is the operand layout of vdpbf16ps: a
// word of A broadcast to every lane, one row pair of B as NR lanes.
//
// The AMX kernel reads B's panel so too, 16 pairs at a time (a tile of 16 rows of 16 words), and A's rows whole
// (the row layout; a tile of 16 rows of 16 words), with `pairs` padded by zeros to a multiple of 16:
//
//   a_panel[i·pairs + p] = bf16(A[i, 2p]) | bf16(A[i, 2p+1]) << 16      i < kBf16AmxTileRows, p < pairs
//
// The arithmetic contract, the same for every kernel:
//
//   acc[i][j] = accumulate ? C[i, j] : 0                                       f32
//   for p = 0 .. pairs-1:  acc += A[i, 2p+1]·B[2p+1, j];  acc += A[i, 2p]·B[2p, j]   each sum rounded to f32
//   C[i, j] = acc[i][j]
//
// Each product of two bf16 values (8 significant bits each) has at most 16 significant bits, so it is exact in
// f32 and the only roundings are the sums: with or without a fused multiply-add the result is the same. The
// odd element before the even one is the order of Intel's description of vdpbf16ps. Because C is stored and
// reloaded as f32 between blocks of k, the whole GEMM's result does not depend on its blocking of rows and columns
// or its threads (AMX's tdpbf16ps sums 16 pairs in an order of its own, so there the blocks of k are part of the
// result).
#include <cstdint>

namespace agf::ops::cpu {

// 14 × 32: the AVX-512 kernel holds 14·(32/16) = 28 accumulators in zmm registers, plus the two zmm of a row
// pair of B and one broadcast word of A: 31 of the 32 registers (docs/cpu-speed.md).
inline constexpr int64_t kBf16TileRows = 14;
inline constexpr int64_t kBf16TileCols = 32;
// 32 × 32 for AMX: 2 × 2 tile registers of 16 × 16 f32, and two of A and two of B, 8 in all; the panels' pairs a
// multiple of 16 (a tile row of 64 bytes).
inline constexpr int64_t kBf16AmxTileRows = 32;
inline constexpr int64_t kBf16AmxPairMultiple = 16;

// C[i, j] at c[i·ldc + j], i < the kernel's tile rows, j < kBf16TileCols; see above.
using Bf16TileKernel = void (*)(int64_t pairs, const uint32_t* a_panel, const uint32_t* b_panel, float* c, int64_t ldc,
                                bool accumulate);

// Plain C++: bf16 words widened to f32 by a shift, the contract above spelled out. Runs everywhere (slowly:
// the accumulators do not fit in registers); the readable reference of the others.
void bf16_tile_portable(int64_t pairs, const uint32_t* a_panel, const uint32_t* b_panel, float* c, int64_t ldc,
                        bool accumulate);

// vdpbf16ps (AVX512-BF16) on 28 zmm accumulators. Only where the processor has AVX512-BF16
// (bf16_avx512_supported(), ops/cpu/gemm_bf16.h); compiled in every x86-64 build through a target attribute.
void bf16_tile_avx512(int64_t pairs, const uint32_t* a_panel, const uint32_t* b_panel, float* c, int64_t ldc,
                      bool accumulate);

// tdpbf16ps (AMX-BF16) on 4 tile registers, a kBf16AmxTileRows × kBf16TileCols tile from A's row layout; pairs a
// multiple of kBf16AmxPairMultiple. Only where bf16_amx_supported() (gemm_bf16.h) says the processor has AMX-BF16
// and Linux has granted the tile registers; compiled in every x86-64 build through a target attribute. Its order
// within a pair is Intel's for tdpbf16ps (the even element first), so it meets the contract's bound, not
// necessarily its bits.
void bf16_tile_amx(int64_t pairs, const uint32_t* a_panel, const uint32_t* b_panel, float* c, int64_t ldc,
                   bool accumulate);

// The AMX kernel's tile configuration (ldtilecfg: 8 tiles of 16 rows × 64 bytes), loaded by each thread before its
// first bf16_tile_amx of a product, and the release of the tiles (tilerelease) after its last.
void bf16_amx_configure_tiles();
void bf16_amx_release_tiles();

}  // namespace agf::ops::cpu
