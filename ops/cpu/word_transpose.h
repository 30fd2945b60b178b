#pragma once
// A block of 32-bit words transposed: the step of the bf16 GEMM's packing (ops/cpu/gemm_bf16.cpp) that turns
// each lane's run of bf16 pairs (a row of A, or a column of B, whose k is contiguous in memory) into a panel,
// where one pair's words of all lanes lie side by side (ops/cpu/bf16_tile.h):
//
//   out[p·out_stride + l] = in[l·in_stride + p]      l < lanes <= kWordTransposeLanes, p < count
//
// Nothing else of `out` is written. Two versions of the same computation: the plain loop, which is the
// reference and runs everywhere, and one with AVX-512F shuffles, 16 × 16 words in registers at a time, about
// a quarter of a shuffle per word instead of a scalar load and store (tests/ops/test_cpu_word_transpose.cpp
// compares them).
#include <cstdint>

namespace agf::ops::cpu {

inline constexpr int64_t kWordTransposeLanes = 16;

void transpose_words(const uint32_t* in, int64_t in_stride, int64_t lanes, int64_t count, uint32_t* out,
                     int64_t out_stride);

// Only where the processor has AVX-512F (the bf16 GEMM calls it with its AVX512-BF16 kernel); compiled in every
// x86-64 build through a target attribute.
void transpose_words_avx512(const uint32_t* in, int64_t in_stride, int64_t lanes, int64_t count, uint32_t* out,
                            int64_t out_stride);

}  // namespace agf::ops::cpu
