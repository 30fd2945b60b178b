#pragma once
// The positional scheme of one attention module, behind one interface: each scheme is a Module that owns
// its learnable parameters (registered under the attention module as `pos.G`, `pos.rho`, ... — SPEC §7)
// and hands them, with its options, to the attention op (ops/attention.h). Schemes:
//
//   none          NoPositional             (no parameters)
//   rope          RotaryPositional         (no parameters; rotates q and k inside the op)
//   alibi         AlibiBias                (fixed slopes)
//   alibi-mult    AlibiMultiplicative      (fixed; PCM-V allowed)
//   t5            T5RelativeBias           (a [32, H] table shared by the stack, or its own `pos.bias`)
//   kerple-log    KerpleLog                (pos.r1, pos.r2)
//   kerple-power  KerplePower              (pos.r1, pos.r2)
//   agf-b/m/f     GravitationalCoefficient (pos.G, pos.rho, [pos.k], [pos.lc2], [pos.lc3]; PCM-V allowed)
//
// Sinusoidal (the Vanilla Transformer) lives in the embeddings: nn/sinusoidal.h.
#include <memory>
#include <string>

#include "autograd/attention.h"
#include "nn/module.h"

namespace agf::nn {

struct PositionalConfig {
  std::string scheme = "none";  // a name of ops::parse_positional_scheme
  bool pcmv = false;            // coefficient schemes only
  int64_t max_distance = 256;   // L
  double k = 2.0;               // the LC1 exponent (fixed, or the initial value when learnable)
  bool learnable_k = false;
  int64_t heads = 1, head_dim = 1;  // MultiHeadAttention fills these in from its own shape
};

class PositionalEncoding : public Module {
 public:
  explicit PositionalEncoding(const PositionalConfig& config);
  ops::PositionalScheme scheme() const { return scheme_; }
  const PositionalConfig& config() const { return config_; }
  // The parameters the attention op needs (undefined members for those the scheme lacks).
  virtual PositionalVariables variables() const { return {}; }
  // Sets the positional part of the op's options: scheme, PCM-V, L, k.
  void configure(ops::AttentionOptions& options) const;

 private:
  ops::PositionalScheme scheme_;
  PositionalConfig config_;
};

// Creates the scheme named by config.scheme. For t5, `shared_t5_table` ([32, H], e.g. the stack's
// `encoder.t5_bias.weight`) is used when defined; otherwise the module owns its table as `bias`.
std::shared_ptr<PositionalEncoding> make_positional_encoding(const PositionalConfig& config, DType dtype,
                                                             const Variable& shared_t5_table = {});

}  // namespace agf::nn
