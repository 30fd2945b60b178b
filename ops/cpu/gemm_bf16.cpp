// ops/cpu/gemm_bf16.h: packing, blocking, threads and the choice of tile kernel (ops/cpu/bf16_tile.h).
//
// Loops, outermost first (the usual order of a packed GEMM):
//   columns of C in blocks of column_block        B's block: kDepthBlock × column_block bf16, shared by the threads
//     k in blocks of kDepthBlock                  B's block packed by all threads together (an OpenMP for)
//       rows of C in blocks of `row_block`        A's block: row_block × kDepthBlock, packed by the thread using it
//         tile columns (kBf16TileCols)            one panel of B: kDepthBlock × 32 bf16 = 16 KiB, stays in L1
//           tile rows (the kernel's)              the tile kernel; partial tiles go through a small buffer
// The first k block writes C, the later ones add to it (accumulate): an f32 store and reload, no rounding.
// The kernel decides A's layout (panels for AVX512-BF16 and the portable kernel, rows for AMX), its tile's rows,
// and the multiple that a panel's pairs are padded to with zeros (TilePlan).
#include "ops/cpu/gemm_bf16.h"

#include <omp.h>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "core/enum_flags.h"
#include "core/error.h"
#include "core/forced_choice.h"
#include "ops/cpu/bf16_round.h"
#include "ops/cpu/bf16_tile.h"
#include "ops/cpu/word_transpose.h"

namespace agf::ops::cpu {

namespace {

constexpr int64_t N = kBf16TileCols;
// k per block (even): B's panel of 128 pairs × 32 words = 16 KiB shares L1 with A's of 128 × 14 words = 7 KiB
// (AVX512-BF16), or A's tile of 32 rows × 128 words = 16 KiB (AMX).
constexpr int64_t kDepthBlock = 256;
// Rows per block of A at most, for any kernel: 384 × 256 bf16 = 192 KiB, within L2 (1 MiB on Zen 4, 2 MiB on
// Sapphire Rapids).
constexpr int64_t kMaxRowBlock = 384;
constexpr int64_t kMaxTileRows = std::max(kBf16TileRows, kBf16AmxTileRows);
// Columns per block of B with AMX: 256 × 8192 bf16 = 4 MiB (read from L3 a panel at a time), so that a product as
// wide as the output layer packs A once per depth block, not once per 2048 columns; with AMX's rate the packing,
// not the tiles, is what such a product spends. (AVX512-BF16: 2048, 1 MiB, read by both threads from L2/L3.)
constexpr int64_t kAmxColumnBlock = 256 * N;
// Lanes of a run that deal_pair rounds at once: a block's rows (A) or columns (B).
constexpr int64_t kMaxLanes = std::max(kMaxRowBlock, kAmxColumnBlock);
// Products with fewer multiply-adds run on one thread: 2^21 take about 40 µs on one core at the AVX-512 kernel's
// rate (≈ 50·10⁹ multiply-adds/s; a few µs with AMX, where packing dominates), and a parallel region with its
// barriers costs several µs — far more when another process holds a core and a thread waits at each barrier for
// one that is not running. (Not tuned for AMX.)
constexpr int64_t kParallelMultiplyAdds = int64_t(1) << 21;

// The kernel a living ForceBf16Kernel names.
ForcedChoice<Bf16Kernel> forced_kernel;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t multiple) { return ceil_div(a, multiple) * multiple; }

// What the driver needs to know of a tile kernel, and the packing steps it runs with: the AVX-512 ones
// (ops/cpu/bf16_round.h, ops/cpu/word_transpose.h) with the AVX-512 kernels, the plain ones with the portable.
struct TilePlan {
  Bf16TileKernel tile;
  void (*round_run)(const float* x, int64_t depth, uint32_t* words);
  void (*round_pairs)(const float* even, const float* odd, int64_t count, uint32_t* words);
  void (*transpose)(const uint32_t* in, int64_t in_stride, int64_t lanes, int64_t count, uint32_t* out,
                    int64_t out_stride);
  int64_t rows;            // of a tile of C (its columns: kBf16TileCols)
  int64_t pair_multiple;   // a panel's pairs padded with zeros to a multiple of this
  bool a_row_layout;       // A packed in the row layout (AMX), else in panels (bf16_tile.h)
  int64_t max_row_block;   // rows per block of A at most, a multiple of `rows`, <= kMaxRowBlock
  int64_t column_block;    // columns per block of B (shared by the threads), a multiple of N, <= kMaxLanes
  void (*begin_thread)();  // run by each thread before its first tile of a product, and
  void (*end_thread)();    // after its last (nullptr: nothing)
};

TilePlan plan_of(Bf16Kernel kernel) {
  if (kernel == Bf16Kernel::amx) {
    return {.tile = bf16_tile_amx,
            .round_run = round_run_avx512,
            .round_pairs = round_pairs_avx512,
            .transpose = transpose_words_avx512,
            .rows = kBf16AmxTileRows,
            .pair_multiple = kBf16AmxPairMultiple,
            .a_row_layout = true,
            .max_row_block = 12 * kBf16AmxTileRows,
            .column_block = kAmxColumnBlock,
            .begin_thread = bf16_amx_configure_tiles,
            .end_thread = bf16_amx_release_tiles};
  }
  const bool avx512 = kernel == Bf16Kernel::avx512bf16;
  return {.tile = avx512 ? bf16_tile_avx512 : bf16_tile_portable,
          .round_run = avx512 ? round_run_avx512 : round_run,
          .round_pairs = avx512 ? round_pairs_avx512 : round_pairs,
          .transpose = avx512 ? transpose_words_avx512 : transpose_words,
          .rows = kBf16TileRows,
          .pair_multiple = 1,
          .a_row_layout = false,
          .max_row_block = 24 * kBf16TileRows,
          .column_block = 64 * N,
          .begin_thread = nullptr,
          .end_thread = nullptr};
}
static_assert(12 * kBf16AmxTileRows <= kMaxRowBlock && 24 * kBf16TileRows <= kMaxRowBlock);
static_assert(kAmxColumnBlock <= kMaxLanes && 64 * N <= kMaxLanes);

// One panel (bf16_tile.h) from lanes (A's rows, or B's columns) whose k is contiguous: `width` lanes ×
// panel_pairs pairs, lane l of pair p at words[p·width + l], element (lane l, k) of the source at
// origin[l·lane_stride + k]; depth <= kDepthBlock, panel_pairs >= ceil(depth/2). Lanes from `lanes` on are
// zeros, so are the pairs from ceil(depth/2) on, and so is the upper half of the last pair for an odd depth. Up
// to 16 lanes at a time, each lane's run rounded into a row of `runs`, then the rows transposed into the
// panel's columns.
void pack_panel(const TilePlan& plan, const float* origin, int64_t lane_stride, int64_t lanes, int64_t width,
                int64_t depth, int64_t panel_pairs, uint32_t* words) {
  const int64_t pairs = ceil_div(depth, 2);
  if (lanes < width) std::fill(words, words + pairs * width, 0u);
  std::fill(words + pairs * width, words + panel_pairs * width, 0u);
  constexpr int64_t kRunWords = kDepthBlock / 2;
  alignas(64) uint32_t runs[kWordTransposeLanes * kRunWords];
  for (int64_t l0 = 0; l0 < lanes; l0 += kWordTransposeLanes) {
    const int64_t group = std::min(kWordTransposeLanes, lanes - l0);
    for (int64_t l = 0; l < group; ++l) plan.round_run(origin + (l0 + l) * lane_stride, depth, runs + l * kRunWords);
    plan.transpose(runs, kRunWords, group, pairs, words + l0, width);
  }
}

// Pair p of a block whose lanes are contiguous in memory (B's columns when B is row-major, A's rows when A is
// column-major): the lanes' even and odd elements (`odd` null for an odd depth's last pair; both null for a pair
// of padding, zeros) rounded as one run over `lanes` and dealt to the panels `width` words at a time, panel q's
// words of pair p at out[(q·panel_pairs + p)·width]; the last panel's lanes past `lanes` are zeros. Each row of
// the source is read once, left to right. lanes <= kMaxLanes.
void deal_pair(const TilePlan& plan, const float* even, const float* odd, int64_t lanes, int64_t width, int64_t p,
               int64_t panel_pairs, uint32_t* out) {
  alignas(64) uint32_t run[kMaxLanes];
  const int64_t panels = ceil_div(lanes, width);
  if (even != nullptr) {
    plan.round_pairs(even, odd, lanes, run);
  } else {
    std::fill(run, run + lanes, 0u);
  }
  std::fill(run + lanes, run + panels * width, 0u);
  for (int64_t q = 0; q < panels; ++q) {
    std::memcpy(out + (q * panel_pairs + p) * width, run + q * width, sizeof(uint32_t) * width);
  }
}

// A[row0 .. row0+rows, k0 .. k0+depth) as ceil(rows/R) panels of R = kBf16TileRows lanes; rows <= kMaxRowBlock.
void pack_a_panels(const TilePlan& plan, GemmMatrix<float> a, int64_t row0, int64_t rows, int64_t k0, int64_t depth,
                   uint32_t* out) {
  constexpr int64_t R = kBf16TileRows;
  const int64_t pairs = ceil_div(depth, 2);
  if (a.column_major) {  // A's rows contiguous (xᵀ in the weight gradients xᵀ·G): a pair at a time
    for (int64_t p = 0; p < pairs; ++p) {
      const float* even = a.data + row0 + (k0 + 2 * p) * a.ld;
      deal_pair(plan, even, 2 * p + 1 < depth ? even + a.ld : nullptr, rows, R, p, pairs, out);
    }
    return;
  }
  for (int64_t panel = 0; panel < ceil_div(rows, R); ++panel) {
    pack_panel(plan, a.data + (row0 + panel * R) * a.ld + k0, a.ld, std::min(R, rows - panel * R), R, depth, pairs,
               out + panel * pairs * R);
  }
}

// A[row0 .. row0+rows, k0 .. k0+depth) in the row layout (bf16_tile.h): row i's panel_pairs words at
// out[i·panel_pairs], the pairs past ceil(depth/2) and the rows up to a whole number of tiles (plan.rows) zeros;
// rows <= kMaxRowBlock.
void pack_a_rows(const TilePlan& plan, GemmMatrix<float> a, int64_t row0, int64_t rows, int64_t k0, int64_t depth,
                 int64_t panel_pairs, uint32_t* out) {
  const int64_t pairs = ceil_div(depth, 2);
  if (!a.column_major) {  // a row's k contiguous: its words are its rounded run
    for (int64_t i = 0; i < rows; ++i) plan.round_run(a.data + (row0 + i) * a.ld + k0, depth, out + i * panel_pairs);
  } else {
    // A's rows contiguous (xᵀ in the weight gradients xᵀ·G): each pair rounded along the rows, one run per pair,
    // and 16 pairs' runs at a time transposed into the rows.
    alignas(64) uint32_t runs[kWordTransposeLanes * kMaxRowBlock];
    for (int64_t p0 = 0; p0 < pairs; p0 += kWordTransposeLanes) {
      const int64_t group = std::min(kWordTransposeLanes, pairs - p0);
      for (int64_t q = 0; q < group; ++q) {
        const int64_t pair = p0 + q;
        const float* even = a.data + row0 + (k0 + 2 * pair) * a.ld;
        plan.round_pairs(even, 2 * pair + 1 < depth ? even + a.ld : nullptr, rows, runs + q * kMaxRowBlock);
      }
      plan.transpose(runs, kMaxRowBlock, group, rows, out + p0, panel_pairs);
    }
  }
  for (int64_t i = 0; i < rows; ++i) std::fill(out + i * panel_pairs + pairs, out + (i + 1) * panel_pairs, 0u);
  std::fill(out + rows * panel_pairs, out + round_up(rows, plan.rows) * panel_pairs, 0u);
}

// B[k0 .. k0+depth, col0 .. col0+cols) of a column-major B (Wᵀ), cols <= N, as one panel of N lanes and
// panel_pairs pairs.
void pack_b_panel(const TilePlan& plan, GemmMatrix<float> b, int64_t k0, int64_t depth, int64_t panel_pairs,
                  int64_t col0, int64_t cols, uint32_t* words) {
  pack_panel(plan, b.data + k0 + col0 * b.ld, b.ld, cols, N, depth, panel_pairs, words);
}

// C[0 .. rows, panel_begin·N .. min(panel_end·N, cols)) from a packed block of A (rows × depth) and the
// panels [panel_begin, panel_end) of a packed block of B, each of `pairs` pairs; c points at the block's
// element (0, 0). A tile of A, plan.rows × pairs words, is either a panel or rows.
void multiply_block(const TilePlan& plan, int64_t pairs, const uint32_t* a_block, int64_t rows, const uint32_t* b_block,
                    int64_t panel_begin, int64_t panel_end, int64_t cols, float* c, int64_t ldc, bool accumulate) {
  const int64_t R = plan.rows;
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const uint32_t* b_panel = b_block + panel * pairs * N;
    const int64_t width = std::min(N, cols - panel * N);
    for (int64_t row_tile = 0; row_tile < ceil_div(rows, R); ++row_tile) {
      const uint32_t* a_panel = a_block + row_tile * pairs * R;
      const int64_t height = std::min(R, rows - row_tile * R);
      float* out = c + row_tile * R * ldc + panel * N;
      if (height == R && width == N) {
        plan.tile(pairs, a_panel, b_panel, out, ldc, accumulate);
        continue;
      }
      // A partial tile: computed whole in a buffer (the panels' padding is zeros), its valid part copied.
      float edge[kMaxTileRows * N];
      if (accumulate) {
        std::fill(edge, edge + R * N, 0.0f);
        for (int64_t i = 0; i < height; ++i) std::memcpy(edge + i * N, out + i * ldc, sizeof(float) * width);
      }
      plan.tile(pairs, a_panel, b_panel, edge, N, accumulate);
      for (int64_t i = 0; i < height; ++i) std::memcpy(out + i * ldc, edge + i * N, sizeof(float) * width);
    }
  }
}

// A 64-byte aligned array of words that only grows: each thread keeps one for A and the calling thread one for
// B, so products after the first allocate nothing.
// (Not formatted: clang-format 14 writes "::operator new (" and "::operator delete (".)
// clang-format off
class WordBuffer {
 public:
  uint32_t* reserve(int64_t words) {
    if (words > capacity_) {
      data_.reset(static_cast<uint32_t*>(::operator new(sizeof(uint32_t) * words, std::align_val_t{64})));
      capacity_ = words;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(uint32_t* p) const { ::operator delete(p, std::align_val_t{64}); }
  };
  std::unique_ptr<uint32_t, Free> data_;
  int64_t capacity_ = 0;
};
// clang-format on

}  // namespace

bool bf16_avx512_supported() {
#if defined(__x86_64__)
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512bf16");
  }();
  return supported;
#else
  return false;
#endif
}

bool bf16_amx_supported() {
#if defined(__x86_64__) && defined(__linux__)
  static const bool supported = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    const bool amx_bf16 = (edx >> 22) & 1u, amx_tile = (edx >> 24) & 1u;  // CPUID.(7, 0):EDX
    if (!amx_bf16 || !amx_tile) return false;
    // Linux (5.16 and later) grants the tile data state to a process that asks; older kernels refuse.
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return supported;
#else
  return false;
#endif
}

bool bf16_kernel_supported(Bf16Kernel kernel) {
  switch (kernel) {
    case Bf16Kernel::portable: return true;
    case Bf16Kernel::avx512bf16: return bf16_avx512_supported();
    // The AMX kernel packs with the AVX-512 transpose.
    case Bf16Kernel::amx: return bf16_amx_supported() && bf16_avx512_supported();
    case Bf16Kernel::none: break;
  }
  return false;
}

Bf16Kernel bf16_kernel() {
  if (const std::optional<Bf16Kernel> forced = forced_kernel.forced()) return *forced;
  if (bf16_kernel_supported(Bf16Kernel::amx)) return Bf16Kernel::amx;
  return bf16_avx512_supported() ? Bf16Kernel::avx512bf16 : Bf16Kernel::none;
}

std::string bf16_kernel_flag(Bf16Kernel kernel) {
  switch (kernel) {
    case Bf16Kernel::amx: return "amx";
    case Bf16Kernel::avx512bf16: return "avx512bf16";
    case Bf16Kernel::portable: return "portable";
    case Bf16Kernel::none: return "none";
  }
  return "?";
}

std::vector<std::string> bf16_kernel_flags() { return enum_flags(kBf16Kernels, bf16_kernel_flag); }

std::optional<Bf16Kernel> parse_bf16_kernel(const std::string& flag) {
  return parse_enum_flag(kBf16Kernels, bf16_kernel_flag, flag);
}

std::string bf16_kernel_name(Bf16Kernel kernel) {
  const std::string flag = bf16_kernel_flag(kernel);
  switch (kernel) {
    case Bf16Kernel::amx: return flag + " (tdpbf16ps, 32×32 tiles)";
    case Bf16Kernel::avx512bf16: return flag + " (vdpbf16ps, 14×32 tiles)";
    case Bf16Kernel::portable: return flag + " (plain C++, slow: for tests)";
    case Bf16Kernel::none: break;
  }
  return flag;
}

std::string bf16_unavailable_reason() {
  if (bf16_kernel() != Bf16Kernel::none) return "";
  return "this processor has no AVX512-BF16 (vdpbf16ps) that the OS enables, the bf16 arithmetic agf's CPU kernel "
         "needs";
}

ForceBf16Kernel::ForceBf16Kernel(Bf16Kernel kernel) {
  AGF_CHECK(bf16_kernel_supported(kernel), "the bf16 kernel '{}' cannot run on this processor",
            bf16_kernel_name(kernel));
  forced_kernel.begin(kernel, "the bf16 kernel", bf16_kernel_flag);
}
ForceBf16Kernel::~ForceBf16Kernel() { forced_kernel.end(); }

void gemm_bf16(Bf16Kernel kernel, int64_t m, int64_t n, int64_t k, GemmMatrix<float> a, GemmMatrix<float> b, float* c,
               int64_t ldc) {
  AGF_CHECK(bf16_kernel_supported(kernel), "gemm_bf16: the kernel '{}' cannot run on this processor",
            bf16_kernel_name(kernel));
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  const TilePlan plan = plan_of(kernel);
  const int64_t R = plan.rows;
  const int threads = !omp_in_parallel() && m * n * k >= kParallelMultiplyAdds ? omp_get_max_threads() : 1;
  // Rows per block of A: at most kMaxRowBlock, in a number of blocks that is a multiple of the threads, as
  // equal as whole tiles allow, so that the static split gives every thread the same rows to within a block's
  // rounding. (Blocks of the largest size and a short last one gave m = 1536 five blocks, three for one
  // thread and two for the other: 1,008 rows against 528.)
  const int64_t tiles = ceil_div(m, R);
  const int64_t blocks_per_thread = ceil_div(tiles, threads * (plan.max_row_block / R));
  const int64_t row_block = R * ceil_div(tiles, threads * blocks_per_thread);
  const int64_t row_blocks = ceil_div(m, row_block);
  const int64_t max_pairs = round_up(ceil_div(std::min(k, kDepthBlock), 2), plan.pair_multiple);
  thread_local WordBuffer b_buffer;
  uint32_t* const b_words = b_buffer.reserve(max_pairs * N * ceil_div(std::min(n, plan.column_block), N));

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    if (plan.begin_thread != nullptr) plan.begin_thread();
    thread_local WordBuffer a_buffer;
    uint32_t* const a_words = a_buffer.reserve(max_pairs * row_block);
    const int team = omp_get_num_threads();
    for (int64_t col0 = 0; col0 < n; col0 += plan.column_block) {
      const int64_t cols = std::min(plan.column_block, n - col0);
      const int64_t panels = ceil_div(cols, N);
      // Work items: a block of rows × a share of the panels. The panels are split only when there are fewer
      // row blocks than threads (few rows, e.g. a short batch); consecutive items share their A block.
      const int64_t shares = row_blocks >= team ? 1 : std::min<int64_t>(panels, ceil_div(team, row_blocks));
      for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
        const int64_t depth = std::min(kDepthBlock, k - k0);
        const int64_t pairs = round_up(ceil_div(depth, 2), plan.pair_multiple);
        if (b.column_major) {  // B = Wᵀ: each column's k contiguous, a panel at a time
#pragma omp for schedule(static)
          for (int64_t panel = 0; panel < panels; ++panel) {
            pack_b_panel(plan, b, k0, depth, pairs, col0 + panel * N, std::min(N, cols - panel * N),
                         b_words + panel * pairs * N);
          }
        } else {  // each row of B contiguous: a pair of rows at a time, across all the panels
#pragma omp for schedule(static)
          for (int64_t p = 0; p < pairs; ++p) {
            const float* even = 2 * p < depth ? b.data + (k0 + 2 * p) * b.ld + col0 : nullptr;
            deal_pair(plan, even, 2 * p + 1 < depth ? even + b.ld : nullptr, cols, N, p, pairs, b_words);
          }
        }
        // (the for's barrier: B's block is packed before anyone reads it, and read by all before the next one)
        int64_t packed = -1;  // the row block now in a_words
#pragma omp for schedule(static)
        for (int64_t item = 0; item < row_blocks * shares; ++item) {
          const int64_t block = item / shares, share = item % shares;
          const int64_t row0 = block * row_block, rows = std::min(row_block, m - row0);
          if (block != packed) {
            if (plan.a_row_layout) {
              pack_a_rows(plan, a, row0, rows, k0, depth, pairs, a_words);
            } else {
              pack_a_panels(plan, a, row0, rows, k0, depth, a_words);
            }
            packed = block;
          }
          multiply_block(plan, pairs, a_words, rows, b_words, panels * share / shares, panels * (share + 1) / shares,
                         cols, c + row0 * ldc + col0, ldc, /*accumulate=*/k0 > 0);
        }
      }
    }
    if (plan.end_thread != nullptr) plan.end_thread();
  }
}

}  // namespace agf::ops::cpu
