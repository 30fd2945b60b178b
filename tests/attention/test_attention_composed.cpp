// The attention op (one graph node with its hand-written backward, ops/cpu/attention.cpp) equals the same
// computation composed from primitive autograd ops, in values and in the gradients of every input, for every
// configuration (f64, to 1e-9 relative).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/random.h"
#include "tests/attention/composed_attention.h"

namespace {

using agf::AttentionCheckCase;
using agf::Tensor;
using agf::Variable;
using agf::ops::PositionalScheme;

// max |a - b| / max(max |b|, 1e-12)
double relative_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_double_vector(), y = b.to_double_vector();
  REQUIRE(x.size() == y.size());
  double difference = 0, scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    difference = std::max(difference, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return difference / std::max(scale, 1e-12);
}

struct Evaluation {
  Tensor output;
  std::vector<Tensor> grads;  // one per input
};

// Runs f on fresh leaves of `inputs`, back-propagates a fixed random weighting of the output.
template <class F>
Evaluation evaluate(F f, const std::vector<Tensor>& inputs) {
  std::vector<Variable> leaves;
  for (const Tensor& input : inputs) leaves.emplace_back(input.clone(), true);
  const Variable y = f(leaves);
  agf::Generator generator(99);
  y.backward(agf::uniform(y.shape(), generator, -1, 1, agf::DType::f64));
  Evaluation e{y.data(), {}};
  for (const Variable& leaf : leaves) e.grads.push_back(leaf.grad());
  return e;
}

void check_op_equals_composed(const AttentionCheckCase& c) {
  const std::vector<Tensor> inputs = agf::attention_check_inputs(c);
  const Evaluation op = evaluate([&](const auto& x) { return agf::attention_check_function(c, x); }, inputs);
  const Evaluation composed = evaluate([&](const auto& x) { return agf::testing::composed_attention(c, x); }, inputs);
  CHECK(relative_difference(op.output, composed.output) < 1e-9);
  const std::vector<std::string> names = agf::positional_parameter_names(c.options.scheme, c.learnable_k);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = i < 3 ? std::string(1, "qkv"[i]) : names[i - 3];
    INFO("gradient of " << name);
    REQUIRE(op.grads[i].defined());
    REQUIRE(composed.grads[i].defined());
    CHECK(relative_difference(op.grads[i], composed.grads[i]) < 1e-9);
  }
}

AttentionCheckCase make_case(PositionalScheme scheme, bool pcmv, bool causal, bool padded) {
  AttentionCheckCase c;
  c.batch = 2;
  c.heads = 3;
  c.queries = c.keys = 6;
  c.head_dim = 4;
  c.options.scheme = scheme;
  c.options.pcmv = pcmv;
  c.options.causal = causal;
  c.options.max_distance = 4;  // T = 6 > L = 4: clamped indices in lc2 and lc3
  if (padded) c.key_lengths = {6, 4};
  c.seed = 7 + static_cast<uint64_t>(scheme);
  return c;
}

}  // namespace

TEST_CASE("the attention op equals attention composed from primitive ops, every configuration", "[attention]") {
  for (PositionalScheme scheme : agf::ops::kPositionalSchemes) {
    for (bool pcmv : {false, true}) {
      if (pcmv && !agf::ops::has_coefficient(scheme)) continue;
      for (bool causal : {false, true}) {
        for (bool padded : {false, true}) {
          DYNAMIC_SECTION(agf::attention_check_name(scheme, pcmv, causal) << (padded ? " padded" : "")) {
            check_op_equals_composed(make_case(scheme, pcmv, causal, padded));
          }
        }
      }
    }
  }
}

TEST_CASE("the attention op equals composed attention for cross-attention shapes (Tq != Tk), fixed k, dropout",
          "[attention]") {
  for (PositionalScheme scheme : agf::ops::kPositionalSchemes) {
    DYNAMIC_SECTION(agf::ops::scheme_name(scheme) << " Tq=3 Tk=7") {
      AttentionCheckCase c = make_case(scheme, agf::ops::has_coefficient(scheme), false, false);
      c.queries = 3;
      c.keys = 7;
      c.key_lengths = {7, 5};
      check_op_equals_composed(c);
      c.options.causal = true;
      check_op_equals_composed(c);
    }
  }
  SECTION("agf-f with a fixed (not learnable) k = 1.5") {
    AttentionCheckCase c = make_case(PositionalScheme::agf_f, true, false, true);
    c.learnable_k = false;
    c.options.k = 1.5;
    check_op_equals_composed(c);
  }
  SECTION("dropout on the weights, with and without PCM-V") {
    for (PositionalScheme scheme : {PositionalScheme::none, PositionalScheme::agf_m, PositionalScheme::agf_f}) {
      AttentionCheckCase c = make_case(scheme, scheme != PositionalScheme::none, true, true);
      c.options.dropout = 0.25;
      c.options.dropout_seed = 11;
      c.options.dropout_offset = 5;
      check_op_equals_composed(c);
    }
  }
}

TEST_CASE("the attention op equals composed attention on a size that runs the multi-threaded path", "[attention]") {
  for (PositionalScheme scheme : {PositionalScheme::agf_m, PositionalScheme::agf_f, PositionalScheme::t5}) {
    DYNAMIC_SECTION(agf::ops::scheme_name(scheme)) {
      AttentionCheckCase c = make_case(scheme, agf::ops::has_coefficient(scheme), false, false);
      c.batch = 3;
      c.heads = 4;
      c.queries = c.keys = 24;
      c.head_dim = 8;
      c.options.max_distance = 12;
      c.key_lengths = {24, 13, 1};  // 3·4·24·24·8 >= 2^16 multiply-adds: the threaded path
      check_op_equals_composed(c);
    }
  }
}

TEST_CASE(
    "the attention op equals composed attention for agf-f on sizes that fill the vector blocks and leave ragged ends",
    "[attention]") {
  // f64 blocks are 32 wide: T = 70 keys = 2 blocks + 6, dk = 40 features = 1 block + 8.
  for (bool causal : {false, true}) {
    for (bool pcmv : {false, true}) {
      DYNAMIC_SECTION((causal ? "causal" : "bidirectional") << (pcmv ? " pcmv" : "")) {
        AttentionCheckCase c = make_case(PositionalScheme::agf_f, pcmv, causal, false);
        c.batch = 2;
        c.heads = 2;
        c.queries = c.keys = 70;
        c.head_dim = 40;
        c.options.max_distance = 50;
        c.key_lengths = {70, 45};
        check_op_equals_composed(c);
      }
    }
  }
}
