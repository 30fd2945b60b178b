#pragma once
// The CPU's bf16 matrix product, agf's own (Debian's OpenBLAS has no sbgemm):
//
//   C [m, n] (row-major, row stride ldc) = bf16(A) [m, k] · bf16(B) [k, n],  summed in f32
//
// where bf16(x) reads a zero or subnormal f32 as a zero of its sign (as vdpbf16ps reads its inputs) and rounds any
// other to bfloat16, to nearest, ties to even (ops/cpu/bf16_round.h; vcvtne2ps2bf16). A and B are f32 and read
// in place, row- or column-major (GemmMatrix, ops/cpu/gemm.h); C is f32. This is what `--precision bf16`
// means for a matrix product on the CPU (ops/cpu/matmul_precision.h, docs/mixed-precision.md), the
// semantics of PyTorch's torch.backends.mkldnn.matmul.fp32_precision = "bf16" (oneDNN's bf16 math mode).
//
// How: A and B are packed, a block at a time, into panels of bf16 pairs (ops/cpu/bf16_tile.h; the rounding
// happens there), and a tile kernel computes each tile of C (14 × 32, or 32 × 32 with AMX) in f32 registers.
// OpenMP threads split the rows of C (or, for few rows, the columns); inside a parallel region (a batch of
// products spread over threads by ops::matmul) it runs on the calling thread. The result is bit for bit the
// same for any number of threads and any blocking of rows and columns (bf16_tile.h says why).
//
// Kernels, chosen once at run time: `amx` where the processor has AMX-BF16 and Linux grants the tile registers
// (Intel Sapphire Rapids and later), else `avx512bf16` where it has AVX512-BF16 (Intel Cooper Lake and later;
// AMD Zen 4 and later), else none: this product then refuses to run (never a silent slow path). `portable`,
// plain C++ with the AVX512-BF16 kernel's arithmetic, is used only when asked for: the tests, and `agf bench
// matmul --precision bf16 --bf16-kernel portable`. A kernel other than the processor's best is run by a
// ForceBf16Kernel (the tests; `agf bench ... --bf16-kernel NAME`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/cpu/gemm.h"

namespace agf::ops::cpu {

enum class Bf16Kernel { none, portable, avx512bf16, amx };

// Whether the processor and the OS support AVX512-BF16 (cpuid, and the OS saving the AVX-512 state: GCC's
// __builtin_cpu_supports checks both). Asked once.
bool bf16_avx512_supported();

// Whether the processor has AMX-BF16 and AMX-TILE (cpuid) and Linux granted this process the tile registers
// (arch_prctl(ARCH_REQ_XCOMP_PERM), asked here, once).
bool bf16_amx_supported();

// Whether `kernel` can run here: portable everywhere, avx512bf16 and amx (which packs with AVX-512) where
// supported, none never.
bool bf16_kernel_supported(Bf16Kernel kernel);

// The kernel ops::matmul runs for bf16 products: the one a living ForceBf16Kernel names, else amx, else
// avx512bf16, the first that is supported, else none.
Bf16Kernel bf16_kernel();

// The kernels `--bf16-kernel` can name, and each one's flag value: "portable", "avx512bf16", "amx" ("none" for
// none); all three; and back (nullopt for any other name).
inline constexpr Bf16Kernel kBf16Kernels[] = {Bf16Kernel::portable, Bf16Kernel::avx512bf16, Bf16Kernel::amx};
std::string bf16_kernel_flag(Bf16Kernel kernel);
std::vector<std::string> bf16_kernel_flags();
std::optional<Bf16Kernel> parse_bf16_kernel(const std::string& flag);

// The flag and what the kernel is: "amx (tdpbf16ps, 32×32 tiles)", "avx512bf16 (vdpbf16ps, 14×32 tiles)",
// "portable (plain C++, slow: for tests)" or "none".
std::string bf16_kernel_name(Bf16Kernel kernel);

// Empty when bf16_kernel() is not none; else why, in one line that names what is missing.
std::string bf16_unavailable_reason();

// While one lives (on any thread), bf16_kernel() is `kernel`, which must be supported here (an error names it
// otherwise); two alive at once must name the same kernel. For the tests, which run the bf16 training path with
// the portable kernel on machines without bf16 arithmetic (slowly), and for `agf bench --bf16-kernel`, which
// times a kernel other than the processor's best.
class ForceBf16Kernel {
 public:
  explicit ForceBf16Kernel(Bf16Kernel kernel);
  ~ForceBf16Kernel();
  ForceBf16Kernel(const ForceBf16Kernel&) = delete;
  ForceBf16Kernel& operator=(const ForceBf16Kernel&) = delete;
};

// C = bf16(A)·bf16(B) with the given kernel (one that bf16_kernel_supported says runs here). m, n, k may be 0
// (k = 0 gives zeros). ops::matmul passes bf16_kernel(); the tests compare the kernels.
void gemm_bf16(Bf16Kernel kernel, int64_t m, int64_t n, int64_t k, GemmMatrix<float> a, GemmMatrix<float> b, float* c,
               int64_t ldc);

}  // namespace agf::ops::cpu
