// The materializing CUDA path (ops/attention_materialized_steps.h) run on the CPU by HostBackend
// (tests/attention/materialized_host_backend.h) — the same steps, row and element functions as the GPU
// kernels, and every product evaluated from the column-major arguments cuBLAS receives — against the CPU op:
// every scheme (agf-f above all, which only this path serves) × PCM-V × causal × padding × dropout, Tq ≠ Tk,
// in f64 (to 1e-12), f32 and 16-bit storage.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "ops/rope.h"
#include "tests/attention/attention_cases.h"
#include "tests/attention/materialized_host_backend.h"

using namespace agf;
using agf::testing::AttentionCase;
using agf::testing::AttentionInputs;
using agf::testing::AttentionResult;
namespace materialized = agf::ops::materialized;

namespace {

// What ops/cuda/attention.cpp does around the steps (the table, key lengths, rope), with CPU tensors.
AttentionResult emulate(const AttentionCase& c, const AttentionInputs& x, DType dtype) {
  const ops::AttentionOptions options = c.options();
  const int64_t M = c.queries, N = c.keys, dk = c.head_dim;
  const ops::PositionalTableShape table_shape{c.heads, dk, std::max<int64_t>({M, N, 1})};
  const Tensor table = ops::positional_table_forward(x.positional, options, table_shape);
  const Tensor lengths = x.key_lengths.defined() ? x.key_lengths.to(DType::i64).contiguous() : Tensor();
  materialized::Call call;
  call.pairs.batch = c.batch;
  call.pairs.heads = c.heads;
  call.pairs.queries = M;
  call.pairs.keys = N;
  call.pairs.head_dim = dk;
  call.pairs.distances = table_shape.distances;
  call.pairs.key_lengths = lengths.defined() ? lengths.data<int64_t>() : nullptr;
  call.pairs.causal = c.causal;
  call.options = options;
  call.table = table.defined() ? table.to(materialized::compute_dtype(dtype)) : Tensor();
  const bool rope = c.scheme == ops::PositionalScheme::rope;
  // rope in f64 on the CPU, then stored in `dtype` (the GPU rotates in the compute type and stores in dtype)
  const Tensor q = (rope ? ops::rope_forward(x.q) : x.q).to(dtype), k = (rope ? ops::rope_forward(x.k) : x.k).to(dtype);
  const Tensor v = x.v.to(dtype), grad = x.grad.to(dtype);

  const ops::AttentionForward forward = materialized::forward<materialized::HostBackend>(call, q, k, v);
  AttentionResult r;
  r.output = forward.output.to(DType::f64);
  const Tensor grad_table = materialized::backward<materialized::HostBackend>(call, grad, q, k, v, forward.saved,
                                                                              r.grads);
  r.grads.q = r.grads.q.to(DType::f64);
  r.grads.k = r.grads.k.to(DType::f64);
  r.grads.v = r.grads.v.to(DType::f64);
  if (rope) {
    r.grads.q = ops::rope_backward(r.grads.q);
    r.grads.k = ops::rope_backward(r.grads.k);
  }
  if (grad_table.defined()) {
    r.grads.positional = ops::positional_table_backward(grad_table.to(DType::f64), x.positional, options, table_shape);
  }
  return r;
}

void check_case(const AttentionCase& c, bool half_types) {
  INFO(c.name());
  const AttentionInputs x = agf::testing::make_inputs(c);
  const AttentionResult reference = agf::testing::cpu_reference(c, x);
  {
    INFO("f64");
    agf::testing::require_matches(c, emulate(c, x, DType::f64), reference, 1e-12);
  }
  {
    INFO("f32");
    agf::testing::require_matches(c, emulate(c, x, DType::f32), reference, 1e-4);
  }
  if (!half_types) return;
  for (const DType dtype : {DType::bf16, DType::f16}) {
    INFO(dtype_name(dtype));
    const AttentionInputs rounded = agf::testing::rounded_to(x, dtype);
    agf::testing::require_matches(c, emulate(c, rounded, dtype), agf::testing::cpu_reference(c, rounded),
                                  dtype == DType::bf16 ? 2e-2 : 3e-3);
  }
}

}  // namespace

TEST_CASE("emulated materializing attention = CPU op: every scheme × PCM-V × causal × padding × dropout",
          "[attention][materialized]") {
  for (const AttentionCase& c : agf::testing::configuration_grid(9, 13, 6)) {
    check_case(c, c.causal && c.padding);
  }
}

TEST_CASE("emulated materializing attention: Tq > Tk, T = 1, an empty row", "[attention][materialized]") {
  struct Size {
    int64_t queries, keys, head_dim;
  };
  for (const Size s : {Size{14, 5, 4}, Size{1, 1, 2}, Size{6, 6, 10}}) {
    for (const auto& [scheme, pcmv] : agf::testing::scheme_variants()) {
      AttentionCase c;
      c.scheme = scheme;
      c.pcmv = pcmv;
      c.causal = s.queries > s.keys;
      c.empty_row = s.queries == 6;
      c.dropout = 0.1;
      c.queries = s.queries;
      c.keys = s.keys;
      c.head_dim = s.head_dim;
      c.max_distance = 3;
      c.seed = static_cast<uint64_t>(s.queries * 7 + static_cast<int64_t>(scheme));
      check_case(c, false);
    }
  }
}

TEST_CASE("the column-major product arguments compute every row-major product the path uses",
          "[attention][materialized]") {
  // c = op(a)·op(b) for each transpose combination, against a direct row-major loop.
  const int64_t rows = 3, cols = 4, inner = 5, batch = 2;
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      std::vector<double> a(static_cast<std::size_t>(batch * rows * inner)),
          b(static_cast<std::size_t>(batch * inner * cols));
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(1.0 + static_cast<double>(i));
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(2.0 + static_cast<double>(i));
      std::vector<double> c(static_cast<std::size_t>(batch * rows * cols));
      materialized::HostBackend::product<double>(materialized::column_major_product(trans_a, trans_b, rows, cols,
                                                                                    inner),
                                                 2.0, b.data(), a.data(), c.data(), batch, Device::cpu());
      for (int64_t t = 0; t < batch; ++t) {
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) {
            double expected = 0;
            for (int64_t l = 0; l < inner; ++l) {
              const double x = trans_a ? a[static_cast<std::size_t>(t * rows * inner + l * rows + i)]
                                       : a[static_cast<std::size_t>(t * rows * inner + i * inner + l)];
              const double y = trans_b ? b[static_cast<std::size_t>(t * inner * cols + j * inner + l)]
                                       : b[static_cast<std::size_t>(t * inner * cols + l * cols + j)];
              expected += x * y;
            }
            CHECK(c[static_cast<std::size_t>(t * rows * cols + i * cols + j)] == Approx(2.0 * expected).margin(1e-14));
          }
        }
      }
    }
  }
}
