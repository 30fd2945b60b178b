#pragma once
// The fused attention algorithm (FlashAttention-style) of the scalar-coefficient schemes, written once for
// the GPU and for a CPU emulation of it.
//
// What it computes is ops/attention.h's op (names from docs/agf-backprop.md: P, s, a, a', W, C, gs, ...)
// for every scheme whose positional term is one number per pair (none, rope after rotation, alibi,
// alibi-mult, t5, kerple-*, agf-b, agf-m; PCM-V on or off). How it computes it ("Fused backward on the GPU"
// in docs/agf-backprop.md has the derivation):
//
//   forward   one block per (b, h, tile of kBlock queries). The block walks the key tiles in order, keeping
//             per query row the running max and Σ exp(s - max) of the scores seen so far, and the output
//             row Σ_n exp(s - max)·keep·C·v in registers, rescaled whenever the max grows (online softmax).
//             No [Tq, Tk] matrix reaches global memory; it saves o and the row log-sum-exp.
//   backward  Δ[m] = Σ_j g[m,j]·o[m,j] per row (equal to Σ_n a'·∂L/∂a', PCM-V and dropout included), then
//             two passes that recompute s, a = exp(s - lse), a' and ∂L/∂s per tile from q, k, v, g:
//             one block per key tile (∂L/∂k, ∂L/∂v and the table gradient, over every query tile), one
//             block per query tile (∂L/∂q, over every key tile). Neither needs an atomic on q, k or v.
//
// Why one header for both devices: there is no GPU where this is written and tested, so every line of the
// block algorithms below runs on the CPU too. A block algorithm is written against an executor `Exec` —
// the GPU executor (ops/cuda/attention_fused_kernels.cu) runs each phase in the block's 256 threads with
// __syncthreads() between phases and warp shuffles for row reductions; the tests' HostBlock
// (tests/attention/fused_host_block.h) runs each phase as a loop over 256 emulated threads, each with its own
// registers (`State`). Tests compare the
// emulated kernels with the CPU op for every scheme, so only the executor itself (the barriers, shuffles and
// shared atomics, about thirty lines) is left for the first GPU run to confirm. Phases that are not
// separated by ex.sync() must not read what another thread wrote in them (the GPU runs them without a
// barrier): reading shared memory written by another thread always has an ex.sync() in between.
//
// Threads and tiles: 256 threads as a 16 × 16 grid, thread id = ty·16 + tx. A thread owns the tile rows
// ty + 16·i (i < kRows) and, for the score micro-tile, the key columns tx + 16·c (c < kCols), for output rows
// the features tx + 16·f (f < kFeatures). The 16 threads that share a ty are one half-warp, so a reduction
// over a row's columns is four xor-shuffles on the GPU. Next steps not taken in this first version:
// tensor-core mma (wgmma on Hopper) for the two tile products, cp.async/TMA double buffering of the K/V
// tiles, one Philox call per four keys (it yields four lanes), and smaller shared tiles for occupancy.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/host_device.h"
#include "core/philox.h"

#if defined(__CUDACC__)
#define AGF_FUSED_FN __device__ __forceinline__  // block algorithms: run by the GPU executor only
#define AGF_UNROLL _Pragma("unroll")             // loops over a thread's registers: unrolled, so they stay registers
#define AGF_UNROLL_4 _Pragma("unroll 4")
#else
#define AGF_FUSED_FN inline
#define AGF_UNROLL
#define AGF_UNROLL_4
#endif

namespace agf::ops::fused {

// ops::TableUse (ops/attention.h) as the kernels read it, for the schemes whose table is one value per pair
// (materialized::term_of converts; agf-f's per-feature table goes through other steps).
enum class ScoreTerm : int {
  none = 0,         // s = P                         none, rope
  bias = 1,         // s = P + bias(δ,h,D)           alibi, t5, kerple-*
  coefficient = 2,  // s = P · C(δ,h,D)              alibi-mult, agf-b, agf-m (PCM-V applies)
};

// The type the kernels compute in for a storage type: f64 for f64, f32 for everything else.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---- small math shared by the devices ------------------------------------------------------------------------

AGF_HOST_DEVICE inline float exp_of(float x) { return expf(x); }
AGF_HOST_DEVICE inline double exp_of(double x) { return exp(x); }
AGF_HOST_DEVICE inline float log_of(float x) { return logf(x); }
AGF_HOST_DEVICE inline double log_of(double x) { return log(x); }
template <class Acc>
AGF_HOST_DEVICE constexpr Acc infinity() {
  return std::numeric_limits<Acc>::infinity();
}
template <class Acc>
AGF_HOST_DEVICE inline Acc larger(Acc a, Acc b) {
  return a < b ? b : a;
}

// ---- online softmax ---------------------------------------------------------------------------------------------
//
// The softmax of a row, seen a part at a time: a part's state is (max, sum, acc) with
//   max = max s over the part (-inf for an empty or fully masked part),
//   sum = Σ exp(s - max),   acc = Σ exp(s - max)·x   (x: whatever the weights multiply, e.g. C·v)
// Two states merge by rescaling both to the larger max; after the whole row, acc/sum = Σ softmax(s)·x and
// max + ln(sum) = ln Σ exp(s). The kernel merges its running state with one key tile at a time.

// exp(old_max - new_max): how much a state built against old_max shrinks when the max grows to new_max
// (new_max >= old_max). A state that has seen no visible key (old_max = -inf) holds sum = acc = 0 and is
// scaled by 0 — never by exp(-inf - (-inf)), which is NaN.
template <class Acc>
AGF_HOST_DEVICE inline Acc rescale_factor(Acc old_max, Acc new_max) {
  return old_max == -infinity<Acc>() ? Acc(0) : exp_of(old_max - new_max);
}

// exp(s - max) of one score against the running max; a masked score (s = -inf) weighs 0.
template <class Acc>
AGF_HOST_DEVICE inline Acc softmax_weight(Acc score, Acc max) {
  return score == -infinity<Acc>() ? Acc(0) : exp_of(score - max);
}

template <class Acc, int kWidth>
struct SoftmaxState {
  Acc max = -infinity<Acc>();
  Acc sum = 0;
  Acc acc[kWidth] = {};
};

// The state of both parts together.
template <class Acc, int kWidth>
AGF_HOST_DEVICE inline SoftmaxState<Acc, kWidth> merge(const SoftmaxState<Acc, kWidth>& x,
                                                       const SoftmaxState<Acc, kWidth>& y) {
  SoftmaxState<Acc, kWidth> out;
  out.max = larger(x.max, y.max);
  const Acc fx = rescale_factor(x.max, out.max), fy = rescale_factor(y.max, out.max);
  out.sum = x.sum * fx + y.sum * fy;
  for (int i = 0; i < kWidth; ++i) out.acc[i] = x.acc[i] * fx + y.acc[i] * fy;
  return out;
}

// acc / sum: the softmax-weighted sum; 0 for a row with no visible key (sum = 0: "softmax of nothing").
template <class Acc>
AGF_HOST_DEVICE inline Acc normalizer(Acc sum) {
  return sum > Acc(0) ? Acc(1) / sum : Acc(0);
}

// ln Σ exp(s) = max + ln(sum); +inf for a row with no visible key, so that exp(s - lse) is 0 for any s.
// (Every visible row has sum >= 1: its largest score contributes exp(0).)
template <class Acc>
AGF_HOST_DEVICE inline Acc log_sum_exp(Acc max, Acc sum) {
  return sum > Acc(0) ? max + log_of(sum) : infinity<Acc>();
}

// ---- what one call computes: shapes, pointers, positional term, masks, dropout ---------------------------------

// One head's rows of a [B, H, T, dk] tensor whose features have unit stride.
template <class Pointer>
struct HeadRows {
  Pointer data = nullptr;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  AGF_HOST_DEVICE Pointer row(int64_t b, int64_t h, int64_t t) const {
    return data + b * batch_stride + h * head_stride + t * row_stride;
  }
};

// The pairs (m, n) of one call: which are visible, and where their positional entry is.
struct PairGeometry {
  int64_t batch = 0, heads = 0, queries = 0, keys = 0, head_dim = 0;
  int64_t distances = 1;                 // D = 0 .. distances-1 (max(Tq, Tk, 1), as the table)
  const int64_t* key_lengths = nullptr;  // [B] on the executing device; null = no padding
  bool causal = false;

  // Clamped to [0, keys]: a bad length is reported by a deferred check (ops/cuda/attention.cpp), and until
  // then must not send a kernel past the keys.
  AGF_HOST_DEVICE int64_t key_length(int64_t b) const {
    const int64_t length = key_lengths ? key_lengths[b] : keys;
    return length < 0 ? 0 : (length > keys ? keys : length);
  }
  // Keys 0 .. visible_end-1 are visible to query m (length = key_length(b)).
  AGF_HOST_DEVICE int64_t visible_end(int64_t length, int64_t m) const {
    return causal ? (length < m + 1 ? length : m + 1) : length;
  }
  AGF_HOST_DEVICE bool visible(int64_t length, int64_t m, int64_t n) const {
    return m < queries && n < visible_end(length, m);
  }
  // The table entry of (δ, h, D) for the pair (m, n): table [2, H, distances(, width)], δ = [n > m].
  AGF_HOST_DEVICE int64_t table_entry(int64_t h, int64_t m, int64_t n) const {
    return n <= m ? h * distances + (m - n) : (heads + h) * distances + (n - m);
  }
  // Row-major index of (b, h, m, n) in [B, H, Tq, Tk]: the dropout stream's element index.
  AGF_HOST_DEVICE int64_t pair_index(int64_t b, int64_t h, int64_t m, int64_t n) const {
    return ((b * heads + h) * queries + m) * keys + n;
  }
};

// What block number `block` owns when blocks walk (b, h, query tile) in that order, kBlock queries a tile:
// queries m0 .. rows_end-1 of head (b, h); keys past key_end are invisible to every one of them (padding,
// or, when causal, keys after the tile's last query).
struct QueryTile {
  int64_t bh = 0, b = 0, h = 0, m0 = 0, rows_end = 0;
  int64_t length = 0;  // key_length(b)
  int64_t key_end = 0;

  AGF_HOST_DEVICE QueryTile(const PairGeometry& P, int64_t block, int kBlock) {
    const int64_t tiles = (P.queries + kBlock - 1) / kBlock;
    bh = block / tiles;
    m0 = (block % tiles) * kBlock;
    b = bh / P.heads;
    h = bh % P.heads;
    length = P.key_length(b);
    rows_end = m0 + kBlock < P.queries ? m0 + kBlock : P.queries;
    key_end = P.causal ? (length < rows_end ? length : rows_end) : length;
  }
};

// The dropout mask on a: element e of the Philox stream (seed, offset) keeps a when its uniform is
// >= p, exactly as the CPU op and ops::dropout_forward on a [B, H, Tq, Tk] tensor.
struct DropoutMask {
  bool enabled = false;
  float threshold = 0;  // p, as float (the comparison the CPU makes)
  uint64_t seed = 0, offset = 0;
  AGF_HOST_DEVICE bool keeps(int64_t element) const {
    return uniform_from_bits(Philox4x32::bits(seed, offset, static_cast<uint64_t>(element))) >= threshold;
  }
};

// The three gradients one visible pair contributes (backward).
template <class Acc>
struct PairGradient {
  Acc value_weight;  // W = a' (· C with PCM-V): multiplies g into ∂L/∂v
  Acc score_grad;  // ∂L/∂P = ∂L/∂s · C (coefficient) or ∂L/∂s: multiplies k into ∂L/∂q, q into ∂L/∂k
  Acc table_grad;  // ∂L/∂C (gs·P, + gW·a' with PCM-V) or ∂L/∂bias (gs) of this pair
};

// Everything the fused kernels read and write. S is the storage type of q, k, v, o, g and the gradients
// (float, double, or a 16-bit type); Acc the compute type (compute_t). Pointers are on the executing device.
template <class S, class Acc>
struct FusedAttention {
  PairGeometry pairs;
  HeadRows<const S*> q, k, v;  // q rotated already for rope, as k
  const Acc* table = nullptr;  // [2, H, distances]: C or bias (null for ScoreTerm::none)
  ScoreTerm term = ScoreTerm::none;
  bool pcmv = false;  // o = Σ a'·C·v (coefficient schemes only)
  Acc scale = 1;      // 1/√dk
  DropoutMask dropout;
  Acc keep_scale = 1;  // 1/(1-p): a' = a·keep_scale where kept

  HeadRows<S*> out;  // forward: o [B, H, Tq, dk]
  // forward, 16-bit storage only: o once more in the compute type (null otherwise). The backward's Δ is
  // Σ_j g·o, and from an o rounded to 16 bits every ∂L/∂s would shift by a·(rounding of Δ); summed over the
  // pairs of a diagonal — sums that mostly cancel — that error dominates the positional gradient.
  HeadRows<Acc*> out_compute;
  Acc* row_logsumexp = nullptr;  // forward writes, backward reads: [B, H, Tq] contiguous

  HeadRows<const S*> grad;              // backward: g = ∂L/∂o
  HeadRows<const Acc*> saved_out;       // backward: the forward's o in the compute type (out or out_compute)
  Acc* delta = nullptr;                 // backward: Δ [B, H, Tq] contiguous
  HeadRows<S*> grad_q, grad_k, grad_v;  // backward outputs (∂L/∂q̃, ∂L/∂k̃ before rope's transpose)
  Acc* grad_table = nullptr;            // backward: ∂L/∂table [2, H, distances], accumulated (+=)

  AGF_HOST_DEVICE Acc positional(int64_t h, int64_t m, int64_t n) const { return table[pairs.table_entry(h, m, n)]; }

  // s from P = (1/√dk)·q·k and the positional entry.
  AGF_HOST_DEVICE Acc score(Acc scaled_dot, Acc position) const {
    return term == ScoreTerm::coefficient ? scaled_dot * position
                                          : (term == ScoreTerm::bias ? scaled_dot + position : scaled_dot);
  }

  // a'/a of the pair: keep_scale where the mask keeps it, 0 where it drops it, 1 without dropout.
  AGF_HOST_DEVICE Acc keep(int64_t b, int64_t h, int64_t m, int64_t n) const {
    if (!dropout.enabled) return Acc(1);
    return dropout.keeps(pairs.pair_index(b, h, m, n)) ? keep_scale : Acc(0);
  }

  // The backward of one visible pair from its recomputed score (docs/agf-backprop.md §3–5):
  //   a = exp(s - lse),  a' = a·keep,  ∂L/∂a' = gW (· C with PCM-V),  gs = a'·∂L/∂a' - a·Δ
  // with gW = Σ_j g[m,j]·v[n,j] and Δ = Σ_n a'·∂L/∂a' of the row (precomputed as Σ_j g·o).
  AGF_HOST_DEVICE PairGradient<Acc> pair_gradient(int64_t b, int64_t h, int64_t m, int64_t n, Acc scaled_dot,
                                                  Acc value_dot, Acc lse, Acc row_delta) const {
    const Acc position = term == ScoreTerm::none ? Acc(0) : positional(h, m, n);
    const Acc coefficient = term == ScoreTerm::coefficient ? position : Acc(1);
    const Acc a = exp_of(score(scaled_dot, position) - lse);
    const Acc dropped = a * keep(b, h, m, n);                            // a'
    const Acc weight_grad = pcmv ? value_dot * coefficient : value_dot;  // ∂L/∂a'
    const Acc gs = dropped * weight_grad - a * row_delta;                // ∂L/∂s
    PairGradient<Acc> out;
    out.value_weight = pcmv ? dropped * coefficient : dropped;
    out.score_grad = gs * coefficient;
    if (term == ScoreTerm::coefficient) {
      out.table_grad = gs * scaled_dot + (pcmv ? value_dot * dropped : Acc(0));  // score path + value path
    } else {
      out.table_grad = term == ScoreTerm::bias ? gs : Acc(0);
    }
    return out;
  }
};

// The same arguments over another storage type of the same layout (agf::Half -> __half in the .cu).
template <class To, class From, class Acc>
FusedAttention<To, Acc> with_storage(const FusedAttention<From, Acc>& x) {
  static_assert(sizeof(To) == sizeof(From), "storage types must have the same layout");
  auto rows = [](const auto& r, auto* typed) {
    HeadRows<decltype(typed)> out;
    out.data = reinterpret_cast<decltype(typed)>(r.data);
    out.batch_stride = r.batch_stride;
    out.head_stride = r.head_stride;
    out.row_stride = r.row_stride;
    return out;
  };
  FusedAttention<To, Acc> y;
  y.pairs = x.pairs;
  y.q = rows(x.q, static_cast<const To*>(nullptr));
  y.k = rows(x.k, static_cast<const To*>(nullptr));
  y.v = rows(x.v, static_cast<const To*>(nullptr));
  y.table = x.table;
  y.term = x.term;
  y.pcmv = x.pcmv;
  y.scale = x.scale;
  y.dropout = x.dropout;
  y.keep_scale = x.keep_scale;
  y.out = rows(x.out, static_cast<To*>(nullptr));
  y.out_compute = x.out_compute;
  y.row_logsumexp = x.row_logsumexp;
  y.grad = rows(x.grad, static_cast<const To*>(nullptr));
  y.saved_out = x.saved_out;
  y.delta = x.delta;
  y.grad_q = rows(x.grad_q, static_cast<To*>(nullptr));
  y.grad_k = rows(x.grad_k, static_cast<To*>(nullptr));
  y.grad_v = rows(x.grad_v, static_cast<To*>(nullptr));
  y.grad_table = x.grad_table;
  return y;
}

// ---- tiles ----------------------------------------------------------------------------------------------------

inline constexpr int kThreads = 256;  // per block, as 16 × 16
inline constexpr int kSide = 16;

// The head sizes the fused kernels are compiled for: dk is padded with zeros up to the next of these.
// 0: dk > 256, which the materializing path serves.
inline constexpr int head_dim_capacity(int64_t head_dim) {
  return head_dim <= 32 ? 32 : head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : head_dim <= 256 ? 256 : 0;
}

// Queries (= keys) per tile: as large as keeps the backward's shared memory under ~200 KB.
template <class Acc, int kHeadDim>
constexpr int tile_rows() {
  if constexpr (sizeof(Acc) == 4) return kHeadDim <= 128 ? 64 : 32;
  return kHeadDim <= 32 ? 64 : (kHeadDim <= 128 ? 32 : 16);
}

template <class Acc, int kHeadDim>
struct Tile {
  static constexpr int kBlock = tile_rows<Acc, kHeadDim>();  // rows of a query tile = rows of a key tile
  static constexpr int kRows = kBlock / kSide;               // tile rows per thread: ty + 16·i
  static constexpr int kCols = kBlock / kSide;               // score columns per thread: tx + 16·c
  static constexpr int kFeatures = kHeadDim / kSide;         // output features per thread: tx + 16·f
  static constexpr int kRowStride = kHeadDim + 1;  // shared [kBlock, kHeadDim] rows, +1 against bank conflicts
  static constexpr int kScoreStride = kBlock + 1;
  static constexpr int kMatrix = kBlock * kRowStride;    // elements of a shared q/k/v/g tile
  static constexpr int kScores = kBlock * kScoreStride;  // elements of a shared score tile
  static constexpr int kDiagonals = 2 * kBlock - 1;      // d = m - n within a tile pair
  // Shared memory, in elements of Acc.
  static constexpr int kForwardShared = 3 * kMatrix + kScores;  // q, k, v, W
  static constexpr int kBackwardShared = 4 * kMatrix + 2 * kScores + 2 * kBlock +
                                         2 * kBlock;  // q, k, v, g, W, gP, lse, Δ, diagonals
  static_assert(kBlock % kSide == 0 && kHeadDim % kSide == 0, "tiles are multiples of 16");
};

// Blocks of each kernel for one call.
inline int64_t query_tile_blocks(const PairGeometry& p, int block) {
  return p.batch * p.heads * ((p.queries + block - 1) / block);
}
inline int64_t key_tile_blocks(const PairGeometry& p, int block) {
  return p.batch * p.heads * ((p.keys + block - 1) / block);
}

// Per-thread registers of each kernel. `part` is the array the executor reduces across a row's 16 threads.
template <class Acc, int kHeadDim>
struct ForwardState {
  using Shape = Tile<Acc, kHeadDim>;
  static constexpr int kParts = Shape::kRows;
  Acc out[Shape::kRows][Shape::kFeatures];  // Σ exp(s - max)·keep·C·v of each owned row
  Acc max[Shape::kRows];                    // running max of the row's scores
  Acc sum[Shape::kRows];                    // running Σ exp(s - max)
  Acc score[Shape::kRows][Shape::kCols];    // the current tile's scores
  Acc part[Shape::kRows];                   // reduced across the row: tile max, then tile sum
};

template <class Acc, int kHeadDim>
struct KeyValueState {
  using Shape = Tile<Acc, kHeadDim>;
  static constexpr int kParts = 1;
  Acc grad_k[Shape::kRows][Shape::kFeatures];  // Σ_m ∂L/∂P·q of each owned key row (times 1/√dk at the end)
  Acc grad_v[Shape::kRows][Shape::kFeatures];  // Σ_m W·g
  Acc part[1];                                 // unused
};

template <class Acc, int kHeadDim>
struct QueryState {
  using Shape = Tile<Acc, kHeadDim>;
  static constexpr int kParts = 1;
  Acc grad_q[Shape::kRows][Shape::kFeatures];  // Σ_n ∂L/∂P·k of each owned query row
  Acc part[1];                                 // unused
};

struct MaxOp {
  template <class Acc>
  AGF_HOST_DEVICE Acc operator()(Acc a, Acc b) const {
    return larger(a, b);
  }
};
struct SumOp {
  template <class Acc>
  AGF_HOST_DEVICE Acc operator()(Acc a, Acc b) const {
    return a + b;
  }
};

// Storage <-> compute conversions. HostIo serves float, double, agf::Half, agf::BFloat16 (explicit float
// conversions); the .cu defines DeviceIo for __half and __nv_bfloat16.
template <class S>
struct HostIo {
  using Storage = S;
  using Acc = compute_t<S>;
  static Acc load(const S& x) { return static_cast<Acc>(static_cast<float>(x)); }
  static S store(Acc x) { return S(static_cast<float>(x)); }
};
template <>
struct HostIo<double> {
  using Storage = double;
  using Acc = double;
  static double load(double x) { return x; }
  static double store(double x) { return x; }
};

// Copies rows first .. first+kBlock-1 of one head into a shared tile (Acc, zero-padded: rows >= count and
// features >= head_dim read as 0, so products over the padded tile equal those over the real one).
// Consecutive threads read consecutive features of a row: coalesced.
template <class Io, int kHeadDim, class Pointer>
AGF_FUSED_FN void load_tile(int tid, typename Io::Acc* tile, const HeadRows<Pointer>& source, int64_t b, int64_t h,
                            int64_t first, int64_t count, int64_t head_dim) {
  using Shape = Tile<typename Io::Acc, kHeadDim>;
  for (int e = tid; e < Shape::kBlock * kHeadDim; e += kThreads) {
    const int r = e / kHeadDim, j = e % kHeadDim;
    const int64_t t = first + r;
    tile[r * Shape::kRowStride + j] = (t < count && j < head_dim) ? Io::load(source.row(b, h, t)[j])
                                                                  : typename Io::Acc(0);
  }
}

// The reverse for a thread's registers: target row first + ty + 16 i, feature tx + 16 f, gets
// store(scale · acc[i][f]), for the rows < count and features < head_dim (the tile's padding is not written).
template <class Io, int kHeadDim>
AGF_FUSED_FN void store_rows(
    int tid,
    const typename Io::Acc (&acc)[Tile<typename Io::Acc, kHeadDim>::kRows][Tile<typename Io::Acc, kHeadDim>::kFeatures],
    const HeadRows<typename Io::Storage*>& target, int64_t b, int64_t h, int64_t first, int64_t count, int64_t head_dim,
    typename Io::Acc scale) {
  using Shape = Tile<typename Io::Acc, kHeadDim>;
  const int ty = tid / kSide, tx = tid % kSide;
  AGF_UNROLL
  for (int i = 0; i < Shape::kRows; ++i) {
    const int64_t t = first + ty + kSide * i;
    if (t >= count) continue;
    typename Io::Storage* row = target.row(b, h, t);
    AGF_UNROLL
    for (int f = 0; f < Shape::kFeatures; ++f) {
      const int j = tx + kSide * f;
      if (j < head_dim) row[j] = Io::store(scale * acc[i][f]);
    }
  }
}

// dot[i][c] = Σ_j rows[ty + 16 i][j] · cols[tx + 16 c][j] over two shared tiles.
template <class Acc, int kHeadDim>
AGF_FUSED_FN void tile_dot(const Acc* rows, const Acc* cols, int ty, int tx,
                           Acc (&dot)[Tile<Acc, kHeadDim>::kRows][Tile<Acc, kHeadDim>::kCols]) {
  using Shape = Tile<Acc, kHeadDim>;
  AGF_UNROLL
  for (int i = 0; i < Shape::kRows; ++i) {
    AGF_UNROLL
    for (int c = 0; c < Shape::kCols; ++c) dot[i][c] = 0;
  }
  AGF_UNROLL_4
  for (int j = 0; j < kHeadDim; ++j) {
    Acc x[Shape::kRows], y[Shape::kCols];
    AGF_UNROLL
    for (int i = 0; i < Shape::kRows; ++i) x[i] = rows[(ty + kSide * i) * Shape::kRowStride + j];
    AGF_UNROLL
    for (int c = 0; c < Shape::kCols; ++c) y[c] = cols[(tx + kSide * c) * Shape::kRowStride + j];
    AGF_UNROLL
    for (int i = 0; i < Shape::kRows; ++i) {
      AGF_UNROLL
      for (int c = 0; c < Shape::kCols; ++c) dot[i][c] += x[i] * y[c];
    }
  }
}

// acc[i][f] += Σ_c scores[ty + 16 i][c] · rows[c][tx + 16 f], c over the tile's kBlock columns: a shared score
// tile [kBlock, kScoreStride] times a shared row tile [kBlock, kRowStride] (o += W·v, ∂q += ∂P·k).
template <class Acc, int kHeadDim>
AGF_FUSED_FN void accumulate_scores_times_rows(const Acc* scores, const Acc* rows, int ty, int tx,
                                               Acc (&acc)[Tile<Acc, kHeadDim>::kRows][Tile<Acc, kHeadDim>::kFeatures]) {
  using Shape = Tile<Acc, kHeadDim>;
  AGF_UNROLL_4
  for (int c = 0; c < Shape::kBlock; ++c) {
    Acc row[Shape::kFeatures];
    AGF_UNROLL
    for (int f = 0; f < Shape::kFeatures; ++f) row[f] = rows[c * Shape::kRowStride + tx + kSide * f];
    AGF_UNROLL
    for (int i = 0; i < Shape::kRows; ++i) {
      const Acc weight = scores[(ty + kSide * i) * Shape::kScoreStride + c];
      AGF_UNROLL
      for (int f = 0; f < Shape::kFeatures; ++f) acc[i][f] += weight * row[f];
    }
  }
}

// ---- forward ---------------------------------------------------------------------------------------------------

// One block: queries m0 .. m0+kBlock-1 of head (b, h). Writes o and the row log-sum-exp.
template <class Io, int kHeadDim, class Exec>
AGF_FUSED_FN void forward_block(Exec& ex, const FusedAttention<typename Io::Storage, typename Io::Acc>& A,
                                int64_t block, typename Io::Acc* shared) {
  using Acc = typename Io::Acc;
  using Shape = Tile<Acc, kHeadDim>;
  using State = ForwardState<Acc, kHeadDim>;
  constexpr int kBlock = Shape::kBlock;
  const PairGeometry& P = A.pairs;
  const QueryTile tile(P, block, kBlock);
  const int64_t bh = tile.bh, b = tile.b, h = tile.h, m0 = tile.m0, length = tile.length, key_end = tile.key_end;
  Acc* sq = shared;
  Acc* sk = sq + Shape::kMatrix;
  Acc* sv = sk + Shape::kMatrix;
  Acc* sw = sv + Shape::kMatrix;  // W = exp(s - max)·keep (·C) of the current tile: [kBlock, kScoreStride]

  ex.for_threads([&](int tid, State& st) {
    load_tile<Io, kHeadDim>(tid, sq, A.q, b, h, m0, P.queries, P.head_dim);
    AGF_UNROLL
    for (int i = 0; i < Shape::kRows; ++i) {
      st.max[i] = -infinity<Acc>();
      st.sum[i] = 0;
      AGF_UNROLL
      for (int f = 0; f < Shape::kFeatures; ++f) st.out[i][f] = 0;
    }
  });
  for (int64_t n0 = 0; n0 < key_end; n0 += kBlock) {
    ex.for_threads([&](int tid, State&) {
      load_tile<Io, kHeadDim>(tid, sk, A.k, b, h, n0, P.keys, P.head_dim);
      load_tile<Io, kHeadDim>(tid, sv, A.v, b, h, n0, P.keys, P.head_dim);
    });
    ex.sync();  // q (first tile), k and v are in shared memory
    // s of the thread's micro-tile, and its max per row
    ex.for_threads([&](int tid, State& st) {
      const int ty = tid / kSide, tx = tid % kSide;
      Acc dot[Shape::kRows][Shape::kCols];
      tile_dot<Acc, kHeadDim>(sq, sk, ty, tx, dot);
      AGF_UNROLL
      for (int i = 0; i < Shape::kRows; ++i) {
        const int64_t m = m0 + ty + kSide * i;
        st.part[i] = -infinity<Acc>();
        AGF_UNROLL
        for (int c = 0; c < Shape::kCols; ++c) {
          const int64_t n = n0 + tx + kSide * c;
          Acc s = -infinity<Acc>();
          if (P.visible(length, m, n)) {
            const Acc position = A.term == ScoreTerm::none ? Acc(0) : A.positional(h, m, n);
            s = A.score(A.scale * dot[i][c], position);
          }
          st.score[i][c] = s;
          st.part[i] = larger(st.part[i], s);
        }
      }
    });
    ex.reduce_part(MaxOp{});  // part[i] = the tile's max of row i
    // merge the tile into the running state; W of the tile into shared memory
    ex.for_threads([&](int tid, State& st) {
      const int ty = tid / kSide, tx = tid % kSide;
      AGF_UNROLL
      for (int i = 0; i < Shape::kRows; ++i) {
        const int r = ty + kSide * i;
        const int64_t m = m0 + r;
        const Acc max = larger(st.max[i], st.part[i]);
        const Acc shrink = rescale_factor(st.max[i], max);
        st.max[i] = max;
        st.sum[i] *= shrink;
        AGF_UNROLL
        for (int f = 0; f < Shape::kFeatures; ++f) st.out[i][f] *= shrink;
        Acc tile_sum = 0;
        AGF_UNROLL
        for (int c = 0; c < Shape::kCols; ++c) {
          const int64_t n = n0 + tx + kSide * c;
          const Acc p = softmax_weight(st.score[i][c], max);  // a·(row sum) before normalization
          tile_sum += p;
          Acc w = p;
          if (p != Acc(0)) {  // visible: the dropout mask and (PCM-V) the coefficient act on the value path
            w *= A.keep(b, h, m, n);
            if (A.pcmv) w *= A.positional(h, m, n);
          }
          sw[r * Shape::kScoreStride + tx + kSide * c] = w;
        }
        st.part[i] = tile_sum;
      }
    });
    ex.reduce_part(SumOp{});  // part[i] = the tile's Σ exp(s - max) of row i
    ex.for_threads([&](int, State& st) {
      AGF_UNROLL
      for (int i = 0; i < Shape::kRows; ++i) st.sum[i] += st.part[i];
    });
    ex.sync();  // W complete
    // out[i][f] += Σ_n W[row i][n] · v[n][feature f]
    ex.for_threads([&](int tid, State& st) {
      accumulate_scores_times_rows<Acc, kHeadDim>(sw, sv, tid / kSide, tid % kSide, st.out);
    });
    ex.sync();  // k, v and W may be overwritten
  }
  // o = out / sum and lse = max + ln(sum), for the rows that exist
  ex.for_threads([&](int tid, State& st) {
    const int ty = tid / kSide, tx = tid % kSide;
    AGF_UNROLL
    for (int i = 0; i < Shape::kRows; ++i) {
      const int64_t m = m0 + ty + kSide * i;
      if (m >= P.queries) continue;
      const Acc inverse = normalizer(st.sum[i]);
      typename Io::Storage* o = A.out.row(b, h, m);
      Acc* o_compute = A.out_compute.data != nullptr ? A.out_compute.row(b, h, m) : nullptr;
      AGF_UNROLL
      for (int f = 0; f < Shape::kFeatures; ++f) {
        const int j = tx + kSide * f;
        if (j >= P.head_dim) continue;
        o[j] = Io::store(st.out[i][f] * inverse);
        if (o_compute != nullptr) o_compute[j] = st.out[i][f] * inverse;
      }
      if (tx == 0) A.row_logsumexp[bh * P.queries + m] = log_sum_exp(st.max[i], st.sum[i]);
    }
  });
}

// ---- backward ----------------------------------------------------------------------------------------------------

// Δ of one row: Σ_j g[m,j]·o[m,j] (= Σ_n a'·∂L/∂a', see the docs), in Acc.
template <class Io>
AGF_FUSED_FN typename Io::Acc row_delta(const typename Io::Storage* g, const typename Io::Acc* o, int64_t head_dim) {
  typename Io::Acc total = 0;
  for (int64_t j = 0; j < head_dim; ++j) total += Io::load(g[j]) * o[j];
  return total;
}

// The pair gradients of a (query tile m0, key tile n0) micro-tile: recomputes P and gW = g·vᵀ, writes
// ∂L/∂P into gp and (when w is not null) W into w, and adds the table gradient of each pair into its
// diagonal d = m - n of `diagonals` (when not null; index r - col + kBlock - 1).
template <class Io, int kHeadDim, class Exec>
AGF_FUSED_FN void
tile_pair_gradients(Exec& ex, int tid, const FusedAttention<typename Io::Storage, typename Io::Acc>& A, int64_t b,
                    int64_t h, int64_t length, int64_t m0, int64_t n0, const typename Io::Acc* sq,
                    const typename Io::Acc* sk, const typename Io::Acc* sg, const typename Io::Acc* sv,
                    const typename Io::Acc* slse, const typename Io::Acc* sdelta, typename Io::Acc* w,
                    typename Io::Acc* gp, typename Io::Acc* diagonals) {
  using Acc = typename Io::Acc;
  using Shape = Tile<Acc, kHeadDim>;
  const int ty = tid / kSide, tx = tid % kSide;
  Acc dot[Shape::kRows][Shape::kCols], value_dot[Shape::kRows][Shape::kCols];
  tile_dot<Acc, kHeadDim>(sq, sk, ty, tx, dot);        // q·k
  tile_dot<Acc, kHeadDim>(sg, sv, ty, tx, value_dot);  // gW = g·v
  AGF_UNROLL
  for (int i = 0; i < Shape::kRows; ++i) {
    const int r = ty + kSide * i;
    const int64_t m = m0 + r;
    AGF_UNROLL
    for (int c = 0; c < Shape::kCols; ++c) {
      const int col = tx + kSide * c;
      const int64_t n = n0 + col;
      Acc value_weight = 0, score_grad = 0;
      if (A.pairs.visible(length, m, n)) {
        const PairGradient<Acc> pg = A.pair_gradient(b, h, m, n, A.scale * dot[i][c], value_dot[i][c], slse[r],
                                                     sdelta[r]);
        value_weight = pg.value_weight;
        score_grad = pg.score_grad;
        if (diagonals != nullptr && pg.table_grad != Acc(0)) {
          ex.add_shared(&diagonals[r - col + Shape::kBlock - 1], pg.table_grad);
        }
      }
      if (w != nullptr) w[r * Shape::kScoreStride + col] = value_weight;
      gp[r * Shape::kScoreStride + col] = score_grad;
    }
  }
}

// Row statistics of a query tile into shared memory: lse and Δ of rows m0 .. m0+kBlock-1 (0 past the end).
template <class Acc, int kBlock>
AGF_FUSED_FN void load_row_statistics(int tid, const PairGeometry& P, const Acc* lse, const Acc* delta, int64_t bh,
                                      int64_t m0, Acc* slse, Acc* sdelta) {
  for (int r = tid; r < kBlock; r += kThreads) {
    const int64_t m = m0 + r;
    slse[r] = m < P.queries ? lse[bh * P.queries + m] : Acc(0);
    sdelta[r] = m < P.queries ? delta[bh * P.queries + m] : Acc(0);
  }
}

// One block: keys n0 .. n0+kBlock-1 of head (b, h), over every query tile that can see them. Writes
// ∂L/∂k, ∂L/∂v of those keys and adds the table gradient of their pairs into A.grad_table.
template <class Io, int kHeadDim, class Exec>
AGF_FUSED_FN void key_value_block(Exec& ex, const FusedAttention<typename Io::Storage, typename Io::Acc>& A,
                                  int64_t block, typename Io::Acc* shared) {
  using Acc = typename Io::Acc;
  using Shape = Tile<Acc, kHeadDim>;
  using State = KeyValueState<Acc, kHeadDim>;
  constexpr int kBlock = Shape::kBlock;
  const PairGeometry& P = A.pairs;
  const int64_t tiles = (P.keys + kBlock - 1) / kBlock;
  const int64_t bh = block / tiles, n0 = (block % tiles) * kBlock;
  const int64_t b = bh / P.heads, h = bh % P.heads;
  const int64_t length = P.key_length(b);
  // Queries that see a key of this tile: all when a key of it is visible at all (n0 < length), from m = n0
  // on when causal (m >= n). A tile of padding keys sees none: its gradients are 0.
  const int64_t m_first = P.causal ? n0 : 0;
  const int64_t m_end = n0 < length ? P.queries : 0;
  Acc* sk = shared;
  Acc* sv = sk + Shape::kMatrix;
  Acc* sq = sv + Shape::kMatrix;
  Acc* sg = sq + Shape::kMatrix;
  Acc* sw = sg + Shape::kMatrix;
  Acc* sgp = sw + Shape::kScores;
  Acc* slse = sgp + Shape::kScores;
  Acc* sdelta = slse + kBlock;
  Acc* sdiag = sdelta + kBlock;  // kDiagonals (+1 unused)
  Acc* diagonals = A.grad_table != nullptr ? sdiag : nullptr;

  ex.for_threads([&](int tid, State& st) {
    load_tile<Io, kHeadDim>(tid, sk, A.k, b, h, n0, P.keys, P.head_dim);
    load_tile<Io, kHeadDim>(tid, sv, A.v, b, h, n0, P.keys, P.head_dim);
    for (int t = tid; t < 2 * kBlock; t += kThreads) sdiag[t] = 0;
    AGF_UNROLL
    for (int i = 0; i < Shape::kRows; ++i) {
      AGF_UNROLL
      for (int f = 0; f < Shape::kFeatures; ++f) st.grad_k[i][f] = st.grad_v[i][f] = 0;
    }
  });
  for (int64_t m0 = m_first; m0 < m_end; m0 += kBlock) {
    ex.sync();  // the previous tile's reads of q, g, W, gP, lse, Δ are done
    ex.for_threads([&](int tid, State&) {
      load_tile<Io, kHeadDim>(tid, sq, A.q, b, h, m0, P.queries, P.head_dim);
      load_tile<Io, kHeadDim>(tid, sg, A.grad, b, h, m0, P.queries, P.head_dim);
      load_row_statistics<Acc, kBlock>(tid, P, A.row_logsumexp, A.delta, bh, m0, slse, sdelta);
    });
    ex.sync();  // k, v (first tile), q, g, lse, Δ loaded; the diagonals zeroed
    ex.for_threads([&](int tid, State&) {
      tile_pair_gradients<Io, kHeadDim>(ex, tid, A, b, h, length, m0, n0, sq, sk, sg, sv, slse, sdelta, sw, sgp,
                                        diagonals);
    });
    ex.sync();  // W, gP and the diagonal sums complete
    ex.for_threads([&](int tid, State& st) {
      const int ty = tid / kSide, tx = tid % kSide;
      // grad_v[key row ty+16i] += Σ_r W[r][key]·g[r],  grad_k[...] += Σ_r gP[r][key]·q[r]
      AGF_UNROLL_4
      for (int r = 0; r < kBlock; ++r) {
        Acc g_row[Shape::kFeatures], q_row[Shape::kFeatures];
        AGF_UNROLL
        for (int f = 0; f < Shape::kFeatures; ++f) {
          g_row[f] = sg[r * Shape::kRowStride + tx + kSide * f];
          q_row[f] = sq[r * Shape::kRowStride + tx + kSide * f];
        }
        AGF_UNROLL
        for (int i = 0; i < Shape::kRows; ++i) {
          const int col = ty + kSide * i;
          const Acc value_weight = sw[r * Shape::kScoreStride + col];
          const Acc score_grad = sgp[r * Shape::kScoreStride + col];
          AGF_UNROLL
          for (int f = 0; f < Shape::kFeatures; ++f) {
            st.grad_v[i][f] += value_weight * g_row[f];
            st.grad_k[i][f] += score_grad * q_row[f];
          }
        }
      }
      // the tile pair's diagonal sums into the table gradient (then zeroed for the next tile)
      if (diagonals != nullptr) {
        for (int t = tid; t < Shape::kDiagonals; t += kThreads) {
          const Acc value = sdiag[t];
          if (value == Acc(0)) continue;
          const int64_t d = m0 - n0 + t - (kBlock - 1);  // m - n of the diagonal
          const int64_t entry = d >= 0 ? h * P.distances + d : (P.heads + h) * P.distances - d;
          ex.add_global(&A.grad_table[entry], value);
          sdiag[t] = 0;
        }
      }
    });
  }
  ex.for_threads([&](int tid, State& st) {
    store_rows<Io, kHeadDim>(tid, st.grad_k, A.grad_k, b, h, n0, P.keys, P.head_dim, A.scale);
    store_rows<Io, kHeadDim>(tid, st.grad_v, A.grad_v, b, h, n0, P.keys, P.head_dim, Acc(1));
  });
}

// One block: queries m0 .. m0+kBlock-1 of head (b, h), over every key tile they can see. Writes ∂L/∂q.
template <class Io, int kHeadDim, class Exec>
AGF_FUSED_FN void query_block(Exec& ex, const FusedAttention<typename Io::Storage, typename Io::Acc>& A, int64_t block,
                              typename Io::Acc* shared) {
  using Acc = typename Io::Acc;
  using Shape = Tile<Acc, kHeadDim>;
  using State = QueryState<Acc, kHeadDim>;
  constexpr int kBlock = Shape::kBlock;
  const PairGeometry& P = A.pairs;
  const QueryTile tile(P, block, kBlock);
  const int64_t bh = tile.bh, b = tile.b, h = tile.h, m0 = tile.m0, length = tile.length, key_end = tile.key_end;
  Acc* sk = shared;  // the same layout as key_value_block
  Acc* sv = sk + Shape::kMatrix;
  Acc* sq = sv + Shape::kMatrix;
  Acc* sg = sq + Shape::kMatrix;
  Acc* sgp = sg + Shape::kMatrix + Shape::kScores;
  Acc* slse = sgp + Shape::kScores;
  Acc* sdelta = slse + kBlock;

  ex.for_threads([&](int tid, State& st) {
    load_tile<Io, kHeadDim>(tid, sq, A.q, b, h, m0, P.queries, P.head_dim);
    load_tile<Io, kHeadDim>(tid, sg, A.grad, b, h, m0, P.queries, P.head_dim);
    load_row_statistics<Acc, kBlock>(tid, P, A.row_logsumexp, A.delta, bh, m0, slse, sdelta);
    AGF_UNROLL
    for (int i = 0; i < Shape::kRows; ++i) {
      AGF_UNROLL
      for (int f = 0; f < Shape::kFeatures; ++f) st.grad_q[i][f] = 0;
    }
  });
  for (int64_t n0 = 0; n0 < key_end; n0 += kBlock) {
    ex.sync();  // the previous tile's reads of k and gP are done
    ex.for_threads([&](int tid, State&) {
      load_tile<Io, kHeadDim>(tid, sk, A.k, b, h, n0, P.keys, P.head_dim);
      load_tile<Io, kHeadDim>(tid, sv, A.v, b, h, n0, P.keys, P.head_dim);
    });
    ex.sync();  // q, g, lse, Δ (first tile), k, v loaded
    ex.for_threads([&](int tid, State&) {
      tile_pair_gradients<Io, kHeadDim>(ex, tid, A, b, h, length, m0, n0, sq, sk, sg, sv, slse, sdelta, nullptr, sgp,
                                        nullptr);
    });
    ex.sync();  // gP complete
    // grad_q[row ty+16i] += Σ_col gP[row][col]·k[col]
    ex.for_threads([&](int tid, State& st) {
      accumulate_scores_times_rows<Acc, kHeadDim>(sgp, sk, tid / kSide, tid % kSide, st.grad_q);
    });
  }
  ex.for_threads([&](int tid, State& st) {
    store_rows<Io, kHeadDim>(tid, st.grad_q, A.grad_q, b, h, m0, P.queries, P.head_dim, A.scale);
  });
}

}  // namespace agf::ops::fused
