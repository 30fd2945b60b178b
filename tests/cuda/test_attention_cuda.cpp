// The attention op on a GPU (ops/cuda/attention.h) against the CPU op in f64: the output and every gradient
// (q, k, v and each positional parameter), for every scheme × PCM-V × causal × padding × dropout, both
// kernels (fused, materialized), sizes that are not multiples of a tile, every compiled head size and one
// above them, f64 (tight), f32 (1e-4) and the 16-bit types (against the f64 op on the same rounded inputs).
// The fused kernels' block algorithms also run on the CPU in tests/attention/test_attention_fused_host.cpp;
// what only a GPU can check is here.
#include <catch2/catch.hpp>

#include "tests/attention/attention_cases.h"
#include "tests/cuda/gpu_test.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/attention.h"
#endif

#ifdef AGF_WITH_CUDA

using namespace agf;
using agf::testing::AttentionCase;
using agf::testing::AttentionInputs;
using agf::testing::AttentionResult;
using ops::cuda::AttentionKernel;

namespace {

// The same values on the GPU, laid out [B, T, H, dk] in memory (a strided [B, H, T, dk] view, as the heads
// of a projection arrive), in `dtype`.
Tensor on_gpu(const Tensor& t, DType dtype, bool interleaved) {
  const Tensor typed = t.to(dtype).to(Device::cuda());
  if (!interleaved) return typed;
  return typed.permute({0, 2, 1, 3}).contiguous().permute({0, 2, 1, 3});
}

ops::PositionalParameters parameters_on_gpu(const ops::PositionalParameters& p, DType dtype) {
  auto move = [&](const Tensor& t) { return t.defined() ? t.to(dtype).to(Device::cuda()) : Tensor(); };
  ops::PositionalParameters out;
  out.G = move(p.G);
  out.rho = move(p.rho);
  out.k = move(p.k);
  out.lc2 = move(p.lc2);
  out.lc3 = move(p.lc3);
  out.t5_table = move(p.t5_table);
  out.r1 = move(p.r1);
  out.r2 = move(p.r2);
  return out;
}

void require_on_gpu(const Tensor& t) {
  if (t.defined()) REQUIRE(t.device() == Device::cuda());
}

// Forward with `kernel`, backward through ops::attention_backward (the route), everything on the GPU.
AttentionResult gpu_run(const AttentionCase& c, const AttentionInputs& x, DType dtype, AttentionKernel kernel,
                        bool interleaved = true) {
  const ops::AttentionOptions options = c.options();
  const Tensor q = on_gpu(x.q, dtype, interleaved), k = on_gpu(x.k, dtype, interleaved),
               v = on_gpu(x.v, dtype, interleaved);
  const Tensor grad = on_gpu(x.grad, dtype, interleaved);
  const Tensor lengths = x.key_lengths.defined() ? x.key_lengths.to(Device::cuda()) : Tensor();
  // The positional parameters in f32 for f32 and the 16-bit types (a model's parameters), f64 for f64.
  const ops::PositionalParameters positional = parameters_on_gpu(x.positional,
                                                                 dtype == DType::f64 ? DType::f64 : DType::f32);
  ops::AttentionForward forward = kernel == AttentionKernel::automatic
                                      ? ops::attention_forward(q, k, v, lengths, positional, options)
                                      : ops::cuda::attention_forward(q, k, v, lengths, positional, options, kernel);
  const AttentionKernel taken = ops::cuda::attention_kernel_for(q, options, kernel);
  CHECK(forward.saved.row_logsumexp.defined() == (taken == AttentionKernel::fused));
  AttentionResult r;
  r.output = forward.output;
  r.grads = ops::attention_backward(grad, q, k, v, lengths, positional, options, forward.saved);
  for (const Tensor* t : {&r.output, &r.grads.q, &r.grads.k, &r.grads.v, &r.grads.positional.G, &r.grads.positional.rho,
                          &r.grads.positional.k, &r.grads.positional.lc2, &r.grads.positional.lc3,
                          &r.grads.positional.t5_table, &r.grads.positional.r1, &r.grads.positional.r2}) {
    require_on_gpu(*t);
  }
  REQUIRE(r.output.dtype() == dtype);
  REQUIRE(r.grads.q.dtype() == dtype);
  // Parameter gradients come back in f64 for comparison (their own dtype is the parameter's).
  ops::PositionalParameters& p = r.grads.positional;
  for (Tensor* t : {&p.G, &p.rho, &p.k, &p.lc2, &p.lc3, &p.t5_table, &p.r1, &p.r2}) {
    if (t->defined()) *t = t->to(DType::f64);
  }
  return r;
}

// f64 (tight) and f32 against the f64 CPU op; the 16-bit types against the f64 op on their rounded inputs.
void check_case(const AttentionCase& c, AttentionKernel kernel, bool half_types) {
  INFO(c.name() << (kernel == AttentionKernel::fused          ? " [fused]"
                    : kernel == AttentionKernel::materialized ? " [materialized]"
                                                              : ""));
  const AttentionInputs x = agf::testing::make_inputs(c);
  const AttentionResult reference = agf::testing::cpu_reference(c, x);
  {
    INFO("f64");
    agf::testing::require_matches(c, gpu_run(c, x, DType::f64, kernel), reference, 1e-11);
  }
  {
    INFO("f32");
    agf::testing::require_matches(c, gpu_run(c, x, DType::f32, kernel), reference, 1e-4);
  }
  if (!half_types) return;
  for (const DType dtype : {DType::bf16, DType::f16}) {
    INFO(dtype_name(dtype));
    const AttentionInputs rounded = agf::testing::rounded_to(x, dtype);
    agf::testing::require_matches(c, gpu_run(c, rounded, dtype, kernel), agf::testing::cpu_reference(c, rounded),
                                  dtype == DType::bf16 ? 2e-2 : 3e-3);
  }
}

}  // namespace

TEST_CASE("GPU attention = CPU: every scheme × PCM-V × causal × padding × dropout", "[cuda][gpu][attention]") {
  AGF_REQUIRE_GPU();
  // Tk = 70: more than one key tile, neither a multiple of 16.
  for (const AttentionCase& c : agf::testing::configuration_grid(17, 70, 20)) {
    check_case(c, AttentionKernel::automatic, c.causal && c.padding);
    // The materializing kernel serves every scheme too (the fused one is automatic where it can).
    if (!ops::is_per_feature(c.scheme)) check_case(c, AttentionKernel::materialized, false);
  }
}

TEST_CASE("GPU attention: sizes 1, 17, 65, 200 and head sizes 32, 64, 128 on both kernels", "[cuda][gpu][attention]") {
  AGF_REQUIRE_GPU();
  const std::vector<std::pair<ops::PositionalScheme, bool>> variants = {{ops::PositionalScheme::agf_m, true},
                                                                        {ops::PositionalScheme::t5, false},
                                                                        {ops::PositionalScheme::rope, false},
                                                                        {ops::PositionalScheme::agf_f, true}};
  for (int64_t length : {1, 17, 65, 200}) {
    for (int64_t head_dim : {32, 64, 128}) {
      for (const auto& [scheme, pcmv] : variants) {
        for (bool causal : {false, true}) {
          AttentionCase c;
          c.scheme = scheme;
          c.pcmv = pcmv;
          c.causal = causal;
          c.padding = true;
          c.dropout = causal ? 0.1 : 0.0;
          c.queries = c.keys = length;
          c.head_dim = head_dim;
          c.seed = static_cast<uint64_t>(length + head_dim);
          check_case(c, AttentionKernel::automatic, length == 65);
          if (!ops::is_per_feature(scheme) && length == 65) check_case(c, AttentionKernel::materialized, false);
        }
      }
    }
  }
}

TEST_CASE("GPU attention: Tq != Tk, odd head sizes, dk = 256 and dk > 256 (materialized)", "[cuda][gpu][attention]") {
  AGF_REQUIRE_GPU();
  struct Size {
    int64_t queries, keys, head_dim;
  };
  for (const Size s : {Size{40, 17, 48}, Size{17, 90, 8}, Size{33, 33, 200}, Size{65, 66, 256}, Size{9, 12, 264}}) {
    for (const auto& [scheme, pcmv] : agf::testing::scheme_variants()) {
      AttentionCase c;
      c.scheme = scheme;
      c.pcmv = pcmv;
      c.causal = s.queries % 2 == 1;
      c.padding = true;
      c.empty_row = s.head_dim == 48;
      c.queries = s.queries;
      c.keys = s.keys;
      c.head_dim = s.head_dim;
      c.seed = static_cast<uint64_t>(s.queries + s.keys + static_cast<int64_t>(scheme));
      check_case(c, AttentionKernel::automatic, s.head_dim == 48);
    }
  }
  // dk = 264 is past the compiled head sizes: the materializing kernel takes it, and asking for fused says why.
  const Tensor q = Tensor::zeros({1, 1, 4, 264}, DType::f32, Device::cuda());
  CHECK(ops::cuda::attention_kernel_for(q, {}) == AttentionKernel::materialized);
  REQUIRE_THROWS_WITH(ops::cuda::attention_kernel_for(q, {}, AttentionKernel::fused), Catch::Contains("> 256"));
  ops::AttentionOptions per_feature;
  per_feature.scheme = ops::PositionalScheme::agf_f;
  REQUIRE_THROWS_WITH(ops::cuda::attention_kernel_for(q.slice(3, 0, 64), per_feature, AttentionKernel::fused),
                      Catch::Contains("agf-f"));
}

TEST_CASE("GPU attention: a fully masked row gives o = 0 and zero gradients, no NaN", "[cuda][gpu][attention]") {
  AGF_REQUIRE_GPU();
  for (const AttentionKernel kernel : {AttentionKernel::fused, AttentionKernel::materialized}) {
    for (const DType dtype : {DType::f32, DType::bf16}) {
      AttentionCase c;
      c.scheme = ops::PositionalScheme::agf_b;
      c.pcmv = true;
      c.batch = 1;
      c.empty_row = true;
      const AttentionInputs x = agf::testing::make_inputs(c);
      const AttentionResult r = gpu_run(c, x, dtype, kernel);
      for (const Tensor& t :
           {r.output, r.grads.q, r.grads.k, r.grads.v, r.grads.positional.G, r.grads.positional.rho}) {
        for (double value : t.to(Device::cpu()).to_double_vector()) REQUIRE(value == 0.0);
      }
    }
  }
}

TEST_CASE("GPU attention: the fused kernels are deterministic, and contiguous and strided inputs agree",
          "[cuda][gpu][attention]") {
  AGF_REQUIRE_GPU();
  AttentionCase c;
  c.scheme = ops::PositionalScheme::agf_m;
  c.pcmv = true;
  c.causal = true;
  c.padding = true;
  c.dropout = 0.2;
  c.queries = c.keys = 130;
  c.head_dim = 64;
  const AttentionInputs x = agf::testing::make_inputs(c);
  const AttentionResult first = gpu_run(c, x, DType::f32, AttentionKernel::fused, true);
  const AttentionResult second = gpu_run(c, x, DType::f32, AttentionKernel::fused, false);
  CHECK(first.output.to(Device::cpu()).to_double_vector() == second.output.to(Device::cpu()).to_double_vector());
  CHECK(first.grads.q.to(Device::cpu()).to_double_vector() == second.grads.q.to(Device::cpu()).to_double_vector());
  CHECK(first.grads.k.to(Device::cpu()).to_double_vector() == second.grads.k.to(Device::cpu()).to_double_vector());
  CHECK(first.grads.v.to(Device::cpu()).to_double_vector() == second.grads.v.to(Device::cpu()).to_double_vector());
  // The table gradient sums with atomics: equal up to the order of f32 additions.
  CHECK(agf::testing::scaled_error(first.grads.positional.lc2, second.grads.positional.lc2) < 1e-5);
}

TEST_CASE("GPU attention: mixed devices and bad arguments fail with the CPU op's messages", "[cuda][gpu][attention]") {
  AGF_REQUIRE_GPU();
  const Tensor q = Tensor::zeros({2, 1, 3, 4}, DType::f32, Device::cuda());
  const Tensor lengths_cpu = Tensor::from_vector(std::vector<int64_t>{3, 2}, {2});
  REQUIRE_THROWS_WITH(ops::attention_forward(q, q, q, lengths_cpu, {}, {}), Catch::Contains("different devices"));
  // The CUDA op called directly (as the bench does) checks it too: the kernels would read a host pointer.
  for (const AttentionKernel kernel : {AttentionKernel::fused, AttentionKernel::materialized}) {
    REQUIRE_THROWS_WITH(ops::cuda::attention_forward(q, q, q, lengths_cpu, {}, {}, kernel),
                        Catch::Contains("different devices"));
  }
  // A bad key length is checked on the GPU without a host wait: reported at the next synchronisation.
  REQUIRE_THROWS_WITH(
      ops::attention_forward(q, q, q, Tensor::from_vector(std::vector<int64_t>{3, 4}, {2}).to(Device::cuda()), {}, {})
          .output.to(Device::cpu()),
      Catch::Contains("key length 4 of sequence 1 is outside [0, 3]"));
  ops::AttentionOptions agf_b;
  agf_b.scheme = ops::PositionalScheme::agf_b;
  REQUIRE_THROWS_WITH(ops::attention_forward(q, q, q, Tensor(), {}, agf_b),
                      Catch::Contains("'G'") && Catch::Contains("missing"));
  ops::AttentionOptions bad_dropout;
  bad_dropout.dropout = 1.0;
  REQUIRE_THROWS_WITH(ops::attention_forward(q, q, q, Tensor(), {}, bad_dropout), Catch::Contains("dropout"));
}

#else

TEST_CASE("GPU attention (this build has no CUDA backend)", "[cuda][gpu][attention]") { AGF_REQUIRE_GPU(); }

#endif
