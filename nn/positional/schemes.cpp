#include "nn/positional/schemes.h"

#include "ops/attention_positional.h"

namespace agf::nn {

// ---- the interface -------------------------------------------------------------------------------------------

PositionalEncoding::PositionalEncoding(const PositionalConfig& config)
    : scheme_(ops::parse_positional_scheme(config.scheme)), config_(config) {
  AGF_CHECK(!config.pcmv || ops::has_coefficient(scheme_),
            "positional scheme '{}': PCM-V applies to the coefficient schemes (agf-b, agf-m, agf-f, alibi-mult)",
            config.scheme);
  AGF_CHECK(config.heads >= 1 && config.head_dim >= 1 && config.max_distance >= 1,
            "positional scheme '{}': heads {}, head size {} and max distance {} must be positive", config.scheme,
            config.heads, config.head_dim, config.max_distance);
  AGF_CHECK(scheme_ != ops::PositionalScheme::rope || config.head_dim % 2 == 0,
            "positional scheme 'rope' needs an even head size, got {}", config.head_dim);
}

void PositionalEncoding::configure(ops::AttentionOptions& options) const {
  options.scheme = scheme_;
  options.pcmv = config_.pcmv;
  options.max_distance = config_.max_distance;
  options.k = config_.k;
}

std::shared_ptr<PositionalEncoding> make_positional_encoding(const PositionalConfig& config, DType dtype,
                                                             const Variable& shared_t5_table) {
  switch (ops::parse_positional_scheme(config.scheme)) {
    case ops::PositionalScheme::none: return std::make_shared<NoPositional>(config);
    case ops::PositionalScheme::rope: return std::make_shared<RotaryPositional>(config);
    case ops::PositionalScheme::alibi: return std::make_shared<AlibiBias>(config);
    case ops::PositionalScheme::alibi_mult: return std::make_shared<AlibiMultiplicative>(config);
    case ops::PositionalScheme::t5: return std::make_shared<T5RelativeBias>(config, dtype, shared_t5_table);
    case ops::PositionalScheme::kerple_log: return std::make_shared<KerpleLog>(config, dtype);
    case ops::PositionalScheme::kerple_power: return std::make_shared<KerplePower>(config, dtype);
    case ops::PositionalScheme::agf_b:
    case ops::PositionalScheme::agf_m:
    case ops::PositionalScheme::agf_f: return std::make_shared<GravitationalCoefficient>(config, dtype);
  }
  fail("make_positional_encoding: unknown scheme '{}'", config.scheme);
}

namespace {
using ops::PositionalParameter;

// A parameter's shape for this module (ops::kPositionalParameterTable).
Shape shape_of(PositionalParameter id, const PositionalConfig& config) {
  return ops::positional_parameter(id).shape(config.heads, config.max_distance, config.head_dim);
}
}  // namespace

// ---- t5 ------------------------------------------------------------------------------------------------------

T5BiasTable::T5BiasTable(int64_t heads, DType dtype) {
  weight_ = register_parameter("weight", Tensor::zeros({ops::kT5Buckets, heads}, dtype));
}

T5RelativeBias::T5RelativeBias(const PositionalConfig& config, DType dtype, const Variable& shared_table)
    : PositionalEncoding(config) {
  if (shared_table.defined()) {
    AGF_CHECK(shared_table.shape() == shape_of(PositionalParameter::t5_table, config),
              "t5: the shared bias table must be [{}, {}], got {}", ops::kT5Buckets, config.heads,
              shared_table.data().description());
    table_ = shared_table;
  } else {
    table_ = register_parameter("bias", Tensor::zeros(shape_of(PositionalParameter::t5_table, config), dtype));
  }
}

PositionalVariables T5RelativeBias::variables() const {
  PositionalVariables v;
  v.t5_table = table_;
  return v;
}

// ---- kerple --------------------------------------------------------------------------------------------------

KerpleLog::KerpleLog(const PositionalConfig& config, DType dtype) : PositionalEncoding(config) {
  r1_ = register_parameter("r1", Tensor::ones(shape_of(PositionalParameter::r1, config), dtype));
  r2_ = register_parameter("r2", Tensor::ones(shape_of(PositionalParameter::r2, config), dtype));
}

KerplePower::KerplePower(const PositionalConfig& config, DType dtype) : PositionalEncoding(config) {
  r1_ = register_parameter("r1", Tensor::ones(shape_of(PositionalParameter::r1, config), dtype));
  r2_ = register_parameter("r2", Tensor::ones(shape_of(PositionalParameter::r2, config), dtype));
}

PositionalVariables KerpleLog::variables() const {
  PositionalVariables v;
  v.r1 = r1_, v.r2 = r2_;
  return v;
}

PositionalVariables KerplePower::variables() const {
  PositionalVariables v;
  v.r1 = r1_, v.r2 = r2_;
  return v;
}

// ---- agf -----------------------------------------------------------------------------------------------------

GravitationalCoefficient::GravitationalCoefficient(const PositionalConfig& config, DType dtype)
    : PositionalEncoding(config) {
  const auto owns = [&](PositionalParameter id) { return ops::positional_parameter(id).owned_by(scheme()); };
  G_ = register_parameter("G", Tensor::ones(shape_of(PositionalParameter::G, config), dtype));
  rho_ = register_parameter("rho", Tensor::full(shape_of(PositionalParameter::rho, config), 1.0 / 24.0, dtype));
  if (config.learnable_k)
    k_ = register_parameter("k", Tensor::full(shape_of(PositionalParameter::k, config), config.k, dtype));
  if (owns(PositionalParameter::lc2))
    lc2_ = register_parameter("lc2", Tensor::ones(shape_of(PositionalParameter::lc2, config), dtype));
  if (owns(PositionalParameter::lc3))
    lc3_ = register_parameter("lc3", Tensor::ones(shape_of(PositionalParameter::lc3, config), dtype));
}

PositionalVariables GravitationalCoefficient::variables() const {
  PositionalVariables v;
  v.G = G_, v.rho = rho_, v.k = k_, v.lc2 = lc2_, v.lc3 = lc3_;
  return v;
}

}  // namespace agf::nn
