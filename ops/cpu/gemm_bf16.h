#pragma once
// The CPU's bf16 matrix product, agf's own (Debian's OpenBLAS has no sbgemm):
//
//   C [m, n] (row-major, row stride ldc) = bf16(A) [m, k] · bf16(B) [k, n],  summed in f32
//
// where bf16(x) rounds an f32 to bfloat16, to nearest, ties to even (BFloat16::from_float, core/half.h), and
// a subnormal result becomes a zero of the same sign (as vdpbf16ps reads its inputs). A and B are f32 and read
// in place, row- or column-major (GemmMatrix, ops/cpu/gemm.h); C is f32. This is what `--precision bf16`
// means for a matrix product on the CPU (ops/cpu/matmul_precision.h, docs/mixed-precision.md), the
// semantics of PyTorch's torch.backends.mkldnn.matmul.fp32_precision = "bf16" (oneDNN's bf16 math mode).
//
// How: A and B are packed, a block at a time, into panels of bf16 pairs (ops/cpu/bf16_tile.h; the rounding
// happens there), and a tile kernel computes each kBf16TileRows × kBf16TileCols tile of C in f32 registers.
// OpenMP threads split the rows of C (or, for few rows, the columns); inside a parallel region (a batch of
// products spread over threads by ops::matmul) it runs on the calling thread. The result is bit for bit the
// same for any number of threads and any blocking (bf16_tile.h says why).
//
// Kernels, chosen once at run time: `avx512bf16` where the processor has AVX512-BF16 (Intel Cooper Lake,
// Sapphire Rapids and later; AMD Zen 4 and later), else none: this product then refuses to run (never a
// silent slow path). `portable`, plain C++ with the same arithmetic, is used only when asked for: the tests
// (ForcePortableBf16Kernel), and `agf bench matmul --precision bf16 --portable-bf16`. AMX is not used yet.
#include <cstdint>
#include <string>

#include "ops/cpu/gemm.h"

namespace agf::ops::cpu {

enum class Bf16Kernel { none, portable, avx512bf16 };

// Whether the processor and the OS support AVX512-BF16 (cpuid, and the OS saving the AVX-512 state: GCC's
// __builtin_cpu_supports checks both). Asked once.
bool bf16_avx512_supported();

// The kernel ops::matmul runs for bf16 products: portable while a ForcePortableBf16Kernel lives, else avx512bf16 where supported,
// else none.
Bf16Kernel bf16_kernel();

// "avx512bf16 (vdpbf16ps, 14×32 tiles)", "portable (plain C++, slow: for tests)" or "none".
std::string bf16_kernel_name(Bf16Kernel kernel);

// Empty when bf16_kernel() is not none; else why, in one line that names what is missing.
std::string bf16_unavailable_reason();

// While one lives (on any thread), bf16_kernel() is the portable one, on any processor. For tests, which run
// the bf16 training path on machines without bf16 arithmetic; slow. Not for programs: `agf` never sets it.
class ForcePortableBf16Kernel {
 public:
  ForcePortableBf16Kernel();
  ~ForcePortableBf16Kernel();
  ForcePortableBf16Kernel(const ForcePortableBf16Kernel&) = delete;
  ForcePortableBf16Kernel& operator=(const ForcePortableBf16Kernel&) = delete;
};

// C = bf16(A)·bf16(B) with the given kernel (not none; avx512bf16 only where supported). m, n, k may be 0
// (k = 0 gives zeros). ops::matmul passes bf16_kernel(); the tests compare the kernels.
void gemm_bf16(Bf16Kernel kernel, int64_t m, int64_t n, int64_t k, GemmMatrix<float> a, GemmMatrix<float> b, float* c,
               int64_t ldc);

}  // namespace agf::ops::cpu
