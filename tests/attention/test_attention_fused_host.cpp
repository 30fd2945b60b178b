// The fused attention kernels (ops/attention_fused.h) emulated on the CPU — the same block algorithms the GPU
// runs, block by block, 256 emulated threads per block — against the CPU op: every fused scheme × PCM-V ×
// causal × padding × dropout, tile-unaligned sizes, Tq ≠ Tk, every compiled head size, f64 (to 1e-12), f32
// and the 16-bit storage types. And the online-softmax merge on its own.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <type_traits>

#include "core/half.h"
#include "ops/rope.h"
#include "tests/attention/attention_cases.h"
#include "tests/attention/fused_host_block.h"

using namespace agf;
using agf::testing::AttentionCase;
using agf::testing::AttentionInputs;
using agf::testing::AttentionResult;
namespace fused = agf::ops::fused;

namespace {

// ---- the online softmax -----------------------------------------------------------------------------------------

// The state of scores[first, last) with values x (one feature), as a kernel builds it.
fused::SoftmaxState<double, 1> part_state(const std::vector<double>& scores, const std::vector<double>& x,
                                          std::size_t first, std::size_t last) {
  fused::SoftmaxState<double, 1> state;
  for (std::size_t n = first; n < last; ++n) state.max = std::max(state.max, scores[n]);
  for (std::size_t n = first; n < last; ++n) {
    const double w = fused::softmax_weight(scores[n], state.max);
    state.sum += w;
    state.acc[0] += w * x[n];
  }
  return state;
}

TEST_CASE("online softmax: merging partial states in any split gives the softmax of the whole row",
          "[attention][fused]") {
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> uniform(-8, 8);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t length = 1 + random() % 40;
    std::vector<double> scores(length), x(length);
    for (std::size_t n = 0; n < length; ++n) {
      scores[n] = random() % 4 == 0 ? -INFINITY : uniform(random);  // some masked keys
      x[n] = uniform(random);
    }
    if (trial % 10 == 0) std::fill(scores.begin(), scores.end(), -INFINITY);  // a fully masked row
    // The reference: softmax over the visible keys, then Σ a·x; 0 when nothing is visible.
    double top = -INFINITY, total = 0, expected = 0;
    for (double s : scores) top = std::max(top, s);
    if (top != -INFINITY) {
      for (double s : scores) total += std::exp(s - top);
      for (std::size_t n = 0; n < length; ++n) expected += std::exp(scores[n] - top) / total * x[n];
    }
    // Left to right in random chunks (as the kernel walks key tiles), and as a balanced tree.
    fused::SoftmaxState<double, 1> running;
    std::vector<fused::SoftmaxState<double, 1>> parts;
    for (std::size_t first = 0; first < length;) {
      const std::size_t last = std::min(length, first + 1 + random() % 7);
      parts.push_back(part_state(scores, x, first, last));
      running = fused::merge(running, parts.back());
      first = last;
    }
    while (parts.size() > 1) {
      std::vector<fused::SoftmaxState<double, 1>> next;
      for (std::size_t i = 0; i + 1 < parts.size(); i += 2) next.push_back(fused::merge(parts[i], parts[i + 1]));
      if (parts.size() % 2 == 1) next.push_back(parts.back());
      parts = next;
    }
    for (const fused::SoftmaxState<double, 1>& state : {running, parts.front()}) {
      const double value = state.acc[0] * fused::normalizer(state.sum);
      REQUIRE(std::isfinite(value));
      CHECK(value == Approx(expected).margin(1e-12));
      if (top == -INFINITY) {
        CHECK(state.sum == 0);
        CHECK(fused::log_sum_exp(state.max, state.sum) == INFINITY);  // exp(s - lse) = 0 for every s
      } else {
        CHECK(fused::log_sum_exp(state.max, state.sum) == Approx(top + std::log(total)).epsilon(1e-13));
      }
    }
  }
}

TEST_CASE("online softmax: the empty state is the identity of merge and never produces NaN", "[attention][fused]") {
  fused::SoftmaxState<float, 2> empty, x;
  x.max = 3;
  x.sum = 2;
  x.acc[0] = 5;
  x.acc[1] = -1;
  for (const auto& merged : {fused::merge(empty, x), fused::merge(x, empty)}) {
    CHECK(merged.max == 3);
    CHECK(merged.sum == 2);
    CHECK(merged.acc[0] == 5);
    CHECK(merged.acc[1] == -1);
  }
  const auto both_empty = fused::merge(empty, empty);
  CHECK(both_empty.sum == 0);
  CHECK(both_empty.acc[0] == 0);
  CHECK(fused::normalizer(both_empty.sum) == 0);
  CHECK(fused::rescale_factor(-INFINITY, -INFINITY) == 0);
  CHECK(fused::softmax_weight(-INFINITY, -INFINITY) == 0);
}

// ---- the emulated kernels ------------------------------------------------------------------------------------------

template <class S>
std::vector<S> storage_of(const Tensor& t) {  // contiguous, converted from f64
  const std::vector<double> values = t.contiguous().to_double_vector();
  std::vector<S> out;
  out.reserve(values.size());
  for (double x : values) out.push_back(fused::HostIo<S>::store(static_cast<fused::compute_t<S>>(x)));
  return out;
}
template <class S>
Tensor tensor_of(const std::vector<S>& values, const Shape& shape) {
  std::vector<double> out;
  out.reserve(values.size());
  for (const S& x : values) out.push_back(static_cast<double>(fused::HostIo<S>::load(x)));
  return Tensor::from_vector(out, shape, DType::f64);
}

// [B, H, T, dk] rows of a contiguous vector, or of one laid out [B, T, H, dk] (as the op's outputs).
template <class Pointer>
fused::HeadRows<Pointer> rows_of(Pointer data, int64_t H, int64_t T, int64_t dk, bool interleaved) {
  fused::HeadRows<Pointer> r;
  r.data = data;
  r.batch_stride = H * T * dk;
  r.head_stride = interleaved ? dk : T * dk;
  r.row_stride = interleaved ? H * dk : dk;
  return r;
}
// Back from [B, T, H, dk] memory to a [B, H, T, dk] tensor.
Tensor from_interleaved(const Tensor& memory, int64_t B, int64_t H, int64_t T, int64_t dk) {
  return memory.reshape({B, T, H, dk}).permute({0, 2, 1, 3}).contiguous();
}

fused::ScoreTerm term_of(ops::PositionalScheme scheme) {
  if (ops::has_coefficient(scheme)) return fused::ScoreTerm::coefficient;
  if (ops::has_score_bias(scheme)) return fused::ScoreTerm::bias;
  return fused::ScoreTerm::none;
}

// Forward and backward of the emulated fused kernels in storage type S, with the host-side steps the GPU op
// takes around them (rope, the table, positional_table_backward).
template <class S, int kHeadDim>
AttentionResult emulate(const AttentionCase& c, const AttentionInputs& x) {
  using Acc = fused::compute_t<S>;
  using Io = fused::HostIo<S>;
  const ops::AttentionOptions options = c.options();
  const int64_t B = c.batch, H = c.heads, M = c.queries, N = c.keys, dk = c.head_dim;
  const ops::PositionalTableShape table_shape{H, dk, std::max<int64_t>({M, N, 1})};
  const Tensor table = ops::positional_table_forward(x.positional, options, table_shape);
  std::vector<Acc> table_values;
  if (table.defined()) {
    for (double value : table.to_double_vector()) table_values.push_back(static_cast<Acc>(value));
  }
  const bool rope = c.scheme == ops::PositionalScheme::rope;
  const std::vector<S> q = storage_of<S>(rope ? ops::rope_forward(x.q) : x.q);
  const std::vector<S> k = storage_of<S>(rope ? ops::rope_forward(x.k) : x.k);
  const std::vector<S> v = storage_of<S>(x.v), g = storage_of<S>(x.grad);
  std::vector<int64_t> lengths;
  if (x.key_lengths.defined()) lengths = x.key_lengths.to_int_vector();

  fused::FusedAttention<S, Acc> A;
  A.pairs.batch = B;
  A.pairs.heads = H;
  A.pairs.queries = M;
  A.pairs.keys = N;
  A.pairs.head_dim = dk;
  A.pairs.distances = table_shape.distances;
  A.pairs.key_lengths = lengths.empty() ? nullptr : lengths.data();
  A.pairs.causal = c.causal;
  A.q = rows_of<const S*>(q.data(), H, M, dk, false);
  A.k = rows_of<const S*>(k.data(), H, N, dk, false);
  A.v = rows_of<const S*>(v.data(), H, N, dk, false);
  A.table = table_values.empty() ? nullptr : table_values.data();
  A.term = term_of(c.scheme);
  A.pcmv = c.pcmv;
  A.scale = static_cast<Acc>(1.0 / std::sqrt(static_cast<double>(dk)));
  A.dropout.enabled = c.dropout > 0;
  A.dropout.threshold = static_cast<float>(c.dropout);
  A.dropout.seed = options.dropout_seed;
  A.dropout.offset = options.dropout_offset;
  A.keep_scale = static_cast<Acc>(1.0 / (1.0 - c.dropout));
  std::vector<S> out(static_cast<std::size_t>(B * M * H * dk), Io::store(Acc(12345)));  // every element is written
  std::vector<Acc> lse(static_cast<std::size_t>(B * H * M));
  A.out = rows_of<S*>(out.data(), H, M, dk, true);
  // o in the compute type for the backward: the output itself, or (16-bit storage) a copy the forward writes
  constexpr bool sixteen_bit = !std::is_same_v<S, Acc>;
  std::vector<Acc> out_compute(sixteen_bit ? out.size() : 0);
  if constexpr (sixteen_bit) A.out_compute = rows_of<Acc*>(out_compute.data(), H, M, dk, false);
  A.row_logsumexp = lse.data();
  fused::host_forward<Io, kHeadDim>(A);

  std::vector<Acc> delta(lse.size());
  std::vector<S> gq(static_cast<std::size_t>(B * M * H * dk), Io::store(Acc(12345)));
  std::vector<S> gk(static_cast<std::size_t>(B * N * H * dk), Io::store(Acc(12345))), gv = gk;
  std::vector<Acc> grad_table(table_values.size(), Acc(0));
  A.grad = rows_of<const S*>(g.data(), H, M, dk, false);
  if constexpr (sixteen_bit) {
    A.saved_out = rows_of<const Acc*>(out_compute.data(), H, M, dk, false);
  } else {
    A.saved_out = rows_of<const Acc*>(out.data(), H, M, dk, true);
  }
  A.delta = delta.data();
  A.grad_q = rows_of<S*>(gq.data(), H, M, dk, true);
  A.grad_k = rows_of<S*>(gk.data(), H, N, dk, true);
  A.grad_v = rows_of<S*>(gv.data(), H, N, dk, true);
  A.grad_table = grad_table.empty() ? nullptr : grad_table.data();
  fused::host_row_deltas<Io>(A);
  fused::host_backward<Io, kHeadDim>(A);

  AttentionResult r;
  r.output = from_interleaved(tensor_of(out, {B * M * H * dk}), B, H, M, dk);
  r.grads.q = from_interleaved(tensor_of(gq, {B * M * H * dk}), B, H, M, dk);
  r.grads.k = from_interleaved(tensor_of(gk, {B * N * H * dk}), B, H, N, dk);
  r.grads.v = from_interleaved(tensor_of(gv, {B * N * H * dk}), B, H, N, dk);
  if (rope) {
    r.grads.q = ops::rope_backward(r.grads.q);
    r.grads.k = ops::rope_backward(r.grads.k);
  }
  if (table.defined()) {
    std::vector<double> values(grad_table.begin(), grad_table.end());
    r.grads.positional = ops::positional_table_backward(Tensor::from_vector(values, table.shape(), DType::f64),
                                                        x.positional, options, table_shape);
  }
  return r;
}

template <class S>
AttentionResult emulate_any(const AttentionCase& c, const AttentionInputs& x) {
  switch (fused::head_dim_capacity(c.head_dim)) {
    case 32: return emulate<S, 32>(c, x);
    case 64: return emulate<S, 64>(c, x);
    case 128: return emulate<S, 128>(c, x);
    case 256: return emulate<S, 256>(c, x);
  }
  FAIL("head size " << c.head_dim << " is not served by the fused kernels");
  return {};
}

void check_case(const AttentionCase& c, bool all_dtypes = false) {
  INFO(c.name());
  const AttentionInputs x = agf::testing::make_inputs(c);
  const AttentionResult reference = agf::testing::cpu_reference(c, x);
  {
    INFO("f64");
    agf::testing::require_matches(c, emulate_any<double>(c, x), reference, 1e-11);
  }
  {
    INFO("f32");
    agf::testing::require_matches(c, emulate_any<float>(c, x), reference, 1e-4);
  }
  if (all_dtypes) {
    // against the f64 op on the same rounded inputs: what is left is the kernel's own rounding (f32 compute,
    // 16-bit outputs, and Δ from the 16-bit o)
    for (const DType dtype : {DType::bf16, DType::f16}) {
      INFO(dtype_name(dtype));
      const AttentionInputs rounded = agf::testing::rounded_to(x, dtype);
      const AttentionResult rounded_reference = agf::testing::cpu_reference(c, rounded);
      const AttentionResult result = dtype == DType::bf16 ? emulate_any<BFloat16>(c, rounded)
                                                          : emulate_any<Half>(c, rounded);
      agf::testing::require_matches(c, result, rounded_reference, dtype == DType::bf16 ? 2e-2 : 3e-3);
    }
  }
}

}  // namespace

TEST_CASE("emulated fused attention = CPU op: every scheme × PCM-V × causal × padding × dropout",
          "[attention][fused]") {
  // Tk = 70: more than one key tile, neither a multiple of 16.
  for (const AttentionCase& c : agf::testing::configuration_grid(17, 70, 20, false)) {
    check_case(c, c.causal && c.padding);
  }
}

TEST_CASE("emulated fused attention: tile-unaligned sizes and every compiled head size", "[attention][fused]") {
  const std::vector<std::pair<ops::PositionalScheme, bool>> variants = {
      {ops::PositionalScheme::agf_m, true}, {ops::PositionalScheme::t5, false}, {ops::PositionalScheme::rope, false}};
  for (int64_t length : {1, 17, 65, 200}) {
    for (int64_t head_dim : {32, 64, 128}) {
      for (const auto& [scheme, pcmv] : variants) {
        AttentionCase c;
        c.scheme = scheme;
        c.pcmv = pcmv;
        c.causal = length % 2 == 1;
        c.padding = true;
        c.queries = c.keys = length;
        c.head_dim = head_dim;
        c.batch = length > 64 ? 1 : 2;
        c.seed = static_cast<uint64_t>(length + head_dim);
        check_case(c);
      }
    }
  }
}

TEST_CASE("emulated fused attention: Tq != Tk, odd head sizes up to 256, an empty row", "[attention][fused]") {
  struct Shape3 {
    int64_t queries, keys, head_dim;
  };
  for (const Shape3 s : {Shape3{40, 17, 48}, Shape3{17, 90, 8}, Shape3{33, 33, 200}, Shape3{5, 3, 256}}) {
    for (bool causal : {false, true}) {
      AttentionCase c;
      c.scheme = causal ? ops::PositionalScheme::alibi_mult : ops::PositionalScheme::kerple_power;
      c.pcmv = causal;
      c.causal = causal;
      c.empty_row = true;
      c.dropout = 0.1;
      c.queries = s.queries;
      c.keys = s.keys;
      c.head_dim = s.head_dim;
      c.seed = static_cast<uint64_t>(s.queries * 3 + s.keys);
      check_case(c, s.head_dim == 48);
    }
  }
}

TEST_CASE("emulated fused attention: a fully masked row has o = 0 and zero gradients, no NaN", "[attention][fused]") {
  AttentionCase c;
  c.scheme = ops::PositionalScheme::agf_b;
  c.pcmv = true;
  c.batch = 1;
  c.empty_row = true;
  const AttentionInputs x = agf::testing::make_inputs(c);
  const AttentionResult r = emulate<float, 32>(c, x);
  for (const Tensor& t : {r.output, r.grads.q, r.grads.k, r.grads.v, r.grads.positional.G, r.grads.positional.rho}) {
    for (double value : t.to_double_vector()) REQUIRE(value == 0.0);
  }
}
