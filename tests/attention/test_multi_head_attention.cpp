#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "nn/multi_head_attention.h"
#include "nn/positional/schemes.h"
#include "nn/sinusoidal.h"
#include "tests/attention/composed_attention.h"

namespace {

using agf::DType;
using agf::Tensor;
using agf::Variable;
using agf::nn::AttentionKind;
using agf::nn::MultiHeadAttention;
using agf::nn::PositionalConfig;

std::map<std::string, agf::Shape> parameter_shapes(const agf::nn::Module& module) {
  std::map<std::string, agf::Shape> shapes;
  for (const auto& [name, parameter] : module.named_parameters()) shapes[name] = parameter.shape();
  return shapes;
}

PositionalConfig config(const std::string& scheme, bool pcmv = false, bool learnable_k = false) {
  PositionalConfig c;
  c.scheme = scheme;
  c.pcmv = pcmv;
  c.learnable_k = learnable_k;
  c.max_distance = 5;
  return c;
}

Tensor random(const agf::Shape& shape, uint64_t seed, double low = -1, double high = 1) {
  agf::Generator generator(seed);
  return agf::uniform(shape, generator, low, high, DType::f64);
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_double_vector(), y = b.to_double_vector();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

}  // namespace

TEST_CASE("MultiHeadAttention names its parameters as SPEC §7 does, per scheme", "[attention][nn]") {
  agf::Generator generator(1);
  const std::vector<std::string> projections = {"q_proj.weight", "q_proj.bias", "k_proj.weight",   "k_proj.bias",
                                                "v_proj.weight", "v_proj.bias", "out_proj.weight", "out_proj.bias"};
  const std::map<std::string, std::map<std::string, agf::Shape>> expected_pos = {
      {"none", {}},
      {"rope", {}},
      {"alibi", {}},
      {"alibi-mult", {}},
      {"t5", {{"pos.bias", {32, 4}}}},
      {"kerple-log", {{"pos.r1", {4}}, {"pos.r2", {4}}}},
      {"kerple-power", {{"pos.r1", {4}}, {"pos.r2", {4}}}},
      {"agf-b", {{"pos.G", {2, 4}}, {"pos.rho", {2, 4}}, {"pos.k", {1}}}},
      {"agf-m", {{"pos.G", {2, 4}}, {"pos.rho", {2, 4}}, {"pos.k", {1}}, {"pos.lc2", {2, 4, 5}}}},
      {"agf-f",
       {{"pos.G", {2, 4}}, {"pos.rho", {2, 4}}, {"pos.k", {1}}, {"pos.lc2", {2, 4, 5}}, {"pos.lc3", {2, 4, 5, 8}}}},
  };
  for (const auto& [scheme, pos] : expected_pos) {
    INFO(scheme);
    const MultiHeadAttention attention(32, 4, config(scheme, false, true), AttentionKind::bidirectional, generator);
    const auto shapes = parameter_shapes(attention);
    CHECK(shapes.size() == projections.size() + pos.size());
    for (const std::string& name : projections) {
      REQUIRE(shapes.count(name) == 1);
      CHECK(shapes.at(name) == (name.ends_with("weight") ? agf::Shape{32, 32} : agf::Shape{32}));
    }
    for (const auto& [name, shape] : pos) {
      REQUIRE(shapes.count(name) == 1);
      CHECK(shapes.at(name) == shape);
    }
  }
  // Cross-attention never has a positional term, whatever the model's scheme.
  const MultiHeadAttention cross(32, 4, config("agf-f", true), AttentionKind::cross, generator);
  CHECK(parameter_shapes(cross).size() == projections.size());
  CHECK(cross.positional().scheme() == agf::ops::PositionalScheme::none);
  // k is a parameter only when learnable.
  const MultiHeadAttention fixed_k(32, 4, config("agf-m"), AttentionKind::bidirectional, generator);
  CHECK(parameter_shapes(fixed_k).count("pos.k") == 0);
}

TEST_CASE("positional parameters start at the values of SPEC §3 and §5", "[attention][nn]") {
  agf::Generator generator(2);
  const MultiHeadAttention agf_f(16, 2, config("agf-f", true, true), AttentionKind::bidirectional, generator);
  for (const auto& [name, parameter] : agf_f.named_parameters()) {
    if (!name.starts_with("pos.")) continue;
    const double expected = name == "pos.rho" ? 1.0 / 24.0 : name == "pos.k" ? 2.0 : 1.0;
    for (double value : parameter.data().to_double_vector()) CHECK(value == Approx(expected).epsilon(1e-7));
  }
  const MultiHeadAttention kerple(16, 2, config("kerple-power"), AttentionKind::causal, generator);
  for (const auto& [name, parameter] : kerple.named_parameters()) {
    if (name.starts_with("pos.")) CHECK(parameter.data().to_double_vector() == std::vector<double>{1.0, 1.0});
  }
}

TEST_CASE("MultiHeadAttention equals projections + the composed attention per head", "[attention][nn]") {
  for (const std::string scheme : {"agf-f", "rope", "kerple-log"}) {
    for (AttentionKind kind : {AttentionKind::bidirectional, AttentionKind::causal, AttentionKind::cross}) {
      DYNAMIC_SECTION(scheme << " kind " << static_cast<int>(kind)) {
        agf::Generator generator(3);
        const bool pcmv = scheme == "agf-f";
        MultiHeadAttention attention(12, 3, config(scheme, pcmv, true), kind, generator, DType::f64);
        const int64_t B = 2, Tq = 5, Tk = kind == AttentionKind::cross ? 7 : 5;
        const Variable x(random({B, Tq, 12}, 4), true);
        const Variable memory = kind == AttentionKind::cross ? Variable(random({B, Tk, 12}, 5), true) : x;
        const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{Tk, Tk - 2}, {2});
        const Variable y = attention.forward(x, memory, lengths);
        CHECK(y.shape() == agf::Shape{B, Tq, 12});

        // The same from primitives: projections by hand, heads by reshape/permute, the composed op.
        std::map<std::string, Variable> p;
        for (const auto& [name, parameter] : attention.named_parameters()) p[name] = parameter.detach();
        auto project = [&](const Variable& input, const std::string& name, int64_t T) {
          const Variable z = agf::matmul(input.detach(), agf::transpose(p[name + ".weight"], 0, 1)) + p[name + ".bias"];
          return agf::permute(agf::reshape(z, {B, T, 3, 4}), {0, 2, 1, 3});
        };
        agf::AttentionCheckCase c;
        c.batch = B, c.heads = 3, c.queries = Tq, c.keys = Tk, c.head_dim = 4;
        c.key_lengths = {Tk, Tk - 2};
        c.options.scheme = attention.positional().scheme();
        c.options.pcmv = kind != AttentionKind::cross && pcmv;
        c.options.causal = kind == AttentionKind::causal;
        c.options.max_distance = 5;
        std::vector<Variable> inputs{project(x, "q_proj", Tq), project(memory, "k_proj", Tk),
                                     project(memory, "v_proj", Tk)};
        for (const std::string& name : agf::positional_parameter_names(c.options.scheme, true)) {
          inputs.push_back(p["pos." + (name == "t5_table" ? std::string("bias") : name)]);
        }
        const Variable o = agf::testing::composed_attention(c, inputs);
        const Variable merged = agf::reshape(agf::permute(o, {0, 2, 1, 3}), {B, Tq, 12});
        const Variable expected = agf::matmul(merged, agf::transpose(p["out_proj.weight"], 0, 1)) + p["out_proj.bias"];
        CHECK(max_abs_difference(y.data(), expected.data()) < 1e-12);

        // Every parameter receives a gradient, the positional ones included.
        agf::sum(y * y).backward();
        for (const auto& [name, parameter] : attention.named_parameters()) {
          INFO(name);
          REQUIRE(parameter.grad().defined());
          CHECK(max_abs_difference(parameter.grad(), Tensor::zeros(parameter.shape(), DType::f64)) > 0);
        }
      }
    }
  }
}

TEST_CASE("MultiHeadAttention passes gradcheck with respect to its inputs", "[attention][nn]") {
  agf::Generator generator(6);
  const auto self = std::make_shared<MultiHeadAttention>(8, 2, config("agf-f", true), AttentionKind::causal, generator,
                                                         DType::f64);
  const auto cross = std::make_shared<MultiHeadAttention>(8, 2, config("agf-m"), AttentionKind::cross, generator,
                                                          DType::f64);
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{4, 2}, {2});
  const agf::GradcheckResult self_check = agf::gradcheck(
      [&](const std::vector<Variable>& x) { return self->forward(x[0], x[0], lengths); }, {random({2, 4, 8}, 7)});
  CHECK(self_check.passed);
  const agf::GradcheckResult cross_check = agf::gradcheck(
      [&](const std::vector<Variable>& x) { return cross->forward(x[0], x[1], lengths); },
      {random({2, 3, 8}, 8), random({2, 4, 8}, 9)});
  CHECK(cross_check.passed);
}

TEST_CASE("a T5 table shared by two layers collects both layers' gradients and belongs to neither", "[attention][nn]") {
  agf::Generator generator(10);
  agf::nn::T5BiasTable table(2, DType::f64);
  Tensor table_values = table.weight().data();  // aliases the parameter
  table_values.copy_from(random({32, 2}, 11));  // something other than the zero init
  MultiHeadAttention first(8, 2, config("t5"), AttentionKind::bidirectional, generator, DType::f64, 0.0,
                           table.weight());
  MultiHeadAttention second(8, 2, config("t5"), AttentionKind::bidirectional, generator, DType::f64, 0.0,
                            table.weight());
  CHECK(parameter_shapes(first).count("pos.bias") == 0);
  CHECK(parameter_shapes(table).count("weight") == 1);
  const Variable x(random({1, 6, 8}, 12), false);
  auto table_gradient = [&](bool use_first, bool use_second) {
    table.weight().zero_grad();
    std::vector<Variable> terms;
    if (use_first) terms.push_back(agf::sum(first.forward(x, x, Tensor())));
    if (use_second) terms.push_back(agf::sum(second.forward(x, x, Tensor())));
    const Variable loss = terms.size() == 2 ? terms[0] + terms[1] : terms[0];
    loss.backward();
    return table.weight().grad().clone();
  };
  const Tensor both = table_gradient(true, true);
  const Tensor one = table_gradient(true, false);
  const Tensor two = table_gradient(false, true);
  std::vector<double> sum = one.to_double_vector(), other = two.to_double_vector();
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += other[i];
  CHECK(max_abs_difference(both, Tensor::from_vector(sum, {32, 2}, DType::f64)) < 1e-12);
  CHECK(max_abs_difference(one, Tensor::zeros({32, 2}, DType::f64)) > 0);
}

TEST_CASE("attention dropout: only in training, reproducible from the generator", "[attention][nn]") {
  agf::Generator init(13);
  MultiHeadAttention attention(8, 2, config("agf-m", true), AttentionKind::bidirectional, init, DType::f64, 0.4);
  const Variable x(random({2, 5, 8}, 14), false);
  attention.eval();
  const Tensor evaluation = attention.forward(x, x, Tensor()).data();
  attention.train();
  agf::Generator a(77), b(77);
  const Tensor first = attention.forward(x, x, Tensor(), &a).data();
  const Tensor again = attention.forward(x, x, Tensor(), &b).data();
  CHECK(max_abs_difference(first, again) == 0.0);
  CHECK(max_abs_difference(first, evaluation) > 1e-3);
  CHECK(a.offset() == 2 * 2 * 5 * 5 / 4);  // one Philox block per 4 weights
  CHECK_THROWS_WITH(attention.forward(x, x, Tensor()), Catch::Contains("needs a generator"));
}

TEST_CASE("sinusoidal positions: sin on even features, cos on odd, frequency 10000^(-2i/d)", "[attention][nn]") {
  const Tensor pe = agf::nn::sinusoidal_positions(50, 16, DType::f64);
  CHECK(pe.shape() == agf::Shape{50, 16});
  const std::vector<double> v = pe.to_double_vector();
  for (int p : {0, 1, 7, 49}) {
    for (int i = 0; i < 8; ++i) {
      const double angle = p / std::pow(10000.0, 2.0 * i / 16.0);
      CHECK(v[p * 16 + 2 * i] == Approx(std::sin(angle)).margin(1e-15));
      CHECK(v[p * 16 + 2 * i + 1] == Approx(std::cos(angle)).margin(1e-15));
    }
  }
  CHECK(v[0 * 16 + 1] == 1.0);  // cos(0)
}
