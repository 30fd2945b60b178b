#pragma once
// One class per positional scheme (see positional_encoding.h for the table of schemes and parameters).
#include "nn/positional/positional_encoding.h"

namespace agf::nn {

// none (NoPE) and rope: nothing to learn; rope's rotation happens inside the attention op.
class NoPositional : public PositionalEncoding {
 public:
  using PositionalEncoding::PositionalEncoding;
};
class RotaryPositional : public PositionalEncoding {
 public:
  using PositionalEncoding::PositionalEncoding;
};

// alibi (s += -slope_h·D) and alibi-mult (C = exp(-slope_h·D)): fixed slopes 2^(-8(h+1)/H), nothing to learn.
class AlibiBias : public PositionalEncoding {
 public:
  using PositionalEncoding::PositionalEncoding;
};
class AlibiMultiplicative : public PositionalEncoding {
 public:
  using PositionalEncoding::PositionalEncoding;
};

// t5: bias = table[bucket(m - n), h]; 32 buckets, logarithmic up to distance 128.
class T5RelativeBias : public PositionalEncoding {
 public:
  // With `shared_table` defined ([32, H]) the module uses it without registering it (its owner, the stack,
  // does); otherwise it owns a zero-initialised table registered as `bias`.
  T5RelativeBias(const PositionalConfig& config, DType dtype, const Variable& shared_table);
  PositionalVariables variables() const override;

 private:
  Variable table_;
};

// The stack-level T5 table (`encoder.t5_bias.weight`): registered once, passed to every layer.
class T5BiasTable : public Module {
 public:
  T5BiasTable(int64_t heads, DType dtype);  // weight [32, H], zeros: training starts from "no bias"
  const Variable& weight() const { return weight_; }

 private:
  Variable weight_;
};

// kerple-log: s += -r1·ln(1 + r2·D);  kerple-power: s += -r1·D^r2.  r1, r2 [H], init 1.
class KerpleLog : public PositionalEncoding {
 public:
  KerpleLog(const PositionalConfig& config, DType dtype);
  PositionalVariables variables() const override;

 private:
  Variable r1_, r2_;
};
class KerplePower : public PositionalEncoding {
 public:
  KerplePower(const PositionalConfig& config, DType dtype);
  PositionalVariables variables() const override;

 private:
  Variable r1_, r2_;
};

// agf-b, agf-m, agf-f: C = G/(1 + D·rho)^k (LC1) · lc2[δ,h,i] (LC2) · lc3[δ,h,i,j] (LC3), SPEC §3.
// Parameters G, rho [2, H] (init 1, 1/24), k [1] when learnable (init config.k), lc2 [2, H, L] and
// lc3 [2, H, L, dk] (init 1) for the levels the scheme has.
class GravitationalCoefficient : public PositionalEncoding {
 public:
  GravitationalCoefficient(const PositionalConfig& config, DType dtype);
  PositionalVariables variables() const override;

 private:
  Variable G_, rho_, k_, lc2_, lc3_;
};

}  // namespace agf::nn
