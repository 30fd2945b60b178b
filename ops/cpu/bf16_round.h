#pragma once
// The bf16 GEMM's rounding of its f32 operands (ops/cpu/gemm_bf16.h), into words of two bf16 values, the lower
// half the even element (ops/cpu/bf16_tile.h):
//
//   bf16(x) = a zero of x's sign when x is zero or subnormal (as vdpbf16ps and tdpbf16ps read their inputs),
//             else x rounded to nearest, ties to even (BFloat16::from_float, core/half.h; nan stays a quiet nan)
//
// which is, bit for bit, what vcvtne2ps2bf16 computes (AVX512-BF16). Two shapes of run, each twice: in plain C++
// (the reference, everywhere) and with vcvtne2ps2bf16, 32 floats an instruction (only where bf16_avx512_supported(),
// gemm_bf16.h; tests/ops/test_cpu_bf16_round.cpp compares them):
//
//   round_run:    words[p] = bf16(x[2p]) | bf16(x[2p+1]) << 16        p < ceil(depth/2); an odd depth's last
//                                                                       upper half is zero
//   round_pairs:  words[l] = bf16(even[l]) | bf16(odd[l]) << 16       l < count; odd null: upper halves zero
#include <cstdint>

namespace agf::ops::cpu {

uint16_t bf16_bits(float x);

void round_run(const float* x, int64_t depth, uint32_t* words);
void round_run_avx512(const float* x, int64_t depth, uint32_t* words);

void round_pairs(const float* even, const float* odd, int64_t count, uint32_t* words);
void round_pairs_avx512(const float* even, const float* odd, int64_t count, uint32_t* words);

}  // namespace agf::ops::cpu
