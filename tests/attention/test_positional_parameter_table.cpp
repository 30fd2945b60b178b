// ops::kPositionalParameterTable and ops::table_use (ops/attention.h), the one description of the positional
// parameters and of how each scheme enters the score: the table's rows, its lookups, that the op's
// validation and the modules follow it for every scheme, and that the scheme predicates read table_use.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "autograd/attention_checks.h"
#include "nn/positional/schemes.h"
#include "ops/attention_positional.h"

namespace {

using agf::ops::kPositionalParameterTable;
using agf::ops::PositionalParameter;
using agf::ops::PositionalParameters;
using agf::ops::PositionalParameterSpec;
using agf::ops::PositionalScheme;

constexpr int64_t kHeads = 3, kL = 5, kHeadDim = 4;

// Every parameter the table says `scheme` owns (k included), as ones of the table's shape.
PositionalParameters owned_parameters(PositionalScheme scheme) {
  PositionalParameters p;
  for (const PositionalParameterSpec& spec : kPositionalParameterTable) {
    if (spec.owned_by(scheme)) p[spec.id] = agf::Tensor::ones(spec.shape(kHeads, kL, kHeadDim), agf::DType::f64);
  }
  return p;
}

void check(const PositionalParameters& p, PositionalScheme scheme) {
  agf::ops::AttentionOptions options;
  options.scheme = scheme;
  options.max_distance = kL;
  agf::ops::check_positional_parameters(p, options, {kHeads, kHeadDim, 7});
}

}  // namespace

TEST_CASE("the positional parameter table has each parameter once, in its enum's order, found by name",
          "[attention][positional]") {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kPositionalParameterTable.size(); ++i) {
    const PositionalParameterSpec& spec = kPositionalParameterTable[i];
    INFO(spec.name);
    CHECK(static_cast<std::size_t>(spec.id) == i);
    CHECK(names.insert(spec.name).second);
    CHECK(&agf::ops::positional_parameter(spec.name) == &spec);
    CHECK(&agf::ops::positional_parameter(spec.id) == &spec);
  }
  CHECK(names == std::set<std::string_view>{"G", "rho", "k", "lc2", "lc3", "t5_table", "r1", "r2"});
  CHECK_THROWS_WITH(agf::ops::positional_parameter("lc4"),
                    Catch::Contains("unknown positional parameter 'lc4'") &&
                        Catch::Contains("G, rho, k, lc2, lc3, t5_table, r1, r2"));
  // The shapes of SPEC §3 and §5, and the value structs indexed by the same ids.
  CHECK(agf::ops::positional_parameter(PositionalParameter::lc3).shape(kHeads, kL, kHeadDim) ==
        agf::Shape{2, kHeads, kL, kHeadDim});
  CHECK(agf::ops::positional_parameter(PositionalParameter::t5_table).shape(kHeads, kL, kHeadDim) ==
        agf::Shape{agf::ops::kT5Buckets, kHeads});
  // operator[] reaches the member of the parameter's name, and only that one (members listed here by hand).
  const std::map<std::string_view, agf::Tensor PositionalParameters::*> members = {
      {"G", &PositionalParameters::G},     {"rho", &PositionalParameters::rho},
      {"k", &PositionalParameters::k},     {"lc2", &PositionalParameters::lc2},
      {"lc3", &PositionalParameters::lc3}, {"t5_table", &PositionalParameters::t5_table},
      {"r1", &PositionalParameters::r1},   {"r2", &PositionalParameters::r2}};
  for (const PositionalParameterSpec& spec : kPositionalParameterTable) {
    INFO(spec.name);
    PositionalParameters p;
    p[spec.id] = agf::Tensor::ones({1});
    for (const auto& [name, member] : members) CHECK((p.*member).defined() == (name == spec.name));
    const PositionalParameters& constant = p;
    CHECK(&constant[spec.id] == &(p.*members.at(spec.name)));
  }
}

TEST_CASE("the op accepts exactly the parameters the table gives each scheme, and the modules own them",
          "[attention][positional]") {
  for (PositionalScheme scheme : agf::ops::kPositionalSchemes) {
    const std::string name(agf::ops::scheme_name(scheme));
    INFO(name);
    CHECK_NOTHROW(check(owned_parameters(scheme), scheme));
    for (const PositionalParameterSpec& spec : kPositionalParameterTable) {
      INFO("parameter " << spec.name);
      PositionalParameters p = owned_parameters(scheme);
      if (spec.owned_by(scheme)) {
        p[spec.id] = agf::Tensor();  // left out
        if (spec.optional) {
          CHECK_NOTHROW(check(p, scheme));
        } else {
          CHECK_THROWS_WITH(check(p, scheme),
                            Catch::Contains("'" + std::string(spec.name) + "'") && Catch::Contains("is missing"));
        }
        p = owned_parameters(scheme);
        p[spec.id] = agf::Tensor::ones({7}, agf::DType::f64);  // the wrong shape
        CHECK_THROWS_WITH(check(p, scheme), Catch::Contains("'" + std::string(spec.name) + "' must be"));
      } else {
        p[spec.id] = agf::Tensor::ones(spec.shape(kHeads, kL, kHeadDim), agf::DType::f64);  // one too many
        CHECK_THROWS_WITH(check(p, scheme), Catch::Contains("'" + std::string(spec.name) + "' was given"));
      }
    }
    // A module of the scheme holds the table's parameters (learnable k included), of the table's shapes.
    agf::nn::PositionalConfig config;
    config.scheme = name;
    config.learnable_k = true;
    config.max_distance = kL;
    config.heads = kHeads;
    config.head_dim = kHeadDim;
    const auto module = agf::nn::make_positional_encoding(config, agf::DType::f64);
    const agf::PositionalVariables variables = module->variables();
    for (const PositionalParameterSpec& spec : kPositionalParameterTable) {
      INFO("parameter " << spec.name);
      CHECK(variables[spec.id].defined() == spec.owned_by(scheme));
      if (variables[spec.id].defined()) CHECK(variables[spec.id].shape() == spec.shape(kHeads, kL, kHeadDim));
    }
    CHECK(
        agf::positional_parameter_names(scheme, true).size() ==
        static_cast<std::size_t>(std::count_if(kPositionalParameterTable.begin(), kPositionalParameterTable.end(),
                                               [&](const PositionalParameterSpec& s) { return s.owned_by(scheme); })));
  }
}

TEST_CASE("how each scheme enters the score is said once, and the predicates read it", "[attention][positional]") {
  using agf::ops::TableUse;
  const std::map<PositionalScheme, TableUse> expected = {{PositionalScheme::none, TableUse::none},
                                                         {PositionalScheme::rope, TableUse::none},
                                                         {PositionalScheme::alibi, TableUse::bias},
                                                         {PositionalScheme::t5, TableUse::bias},
                                                         {PositionalScheme::kerple_log, TableUse::bias},
                                                         {PositionalScheme::kerple_power, TableUse::bias},
                                                         {PositionalScheme::alibi_mult, TableUse::coefficient},
                                                         {PositionalScheme::agf_b, TableUse::coefficient},
                                                         {PositionalScheme::agf_m, TableUse::coefficient},
                                                         {PositionalScheme::agf_f, TableUse::feature_coefficient}};
  REQUIRE(expected.size() == agf::ops::kPositionalSchemes.size());
  for (PositionalScheme scheme : agf::ops::kPositionalSchemes) {
    INFO(agf::ops::scheme_name(scheme));
    const TableUse use = agf::ops::table_use(scheme);
    CHECK(use == expected.at(scheme));
    CHECK(agf::ops::has_coefficient(scheme) == (use == TableUse::coefficient || use == TableUse::feature_coefficient));
    CHECK(agf::ops::has_score_bias(scheme) == (use == TableUse::bias));
    CHECK(agf::ops::is_per_feature(scheme) == (use == TableUse::feature_coefficient));
  }
}
