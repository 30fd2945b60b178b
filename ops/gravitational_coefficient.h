#pragma once
// LC1, the first level of AGF's gravitational coefficient, and the pieces its derivatives reuse, in
// double: written once for the CPU table (ops/cpu/attention_positional.cpp) and the CUDA one
// (ops/cuda/positional_table_kernels.cu).
//
//   LC1(δ, h, D) = G[δ,h] / base^k,   base = 1 + D·ρ⁺,   ρ⁺ = max(rho[δ,h], 0)
//   ∂LC1/∂G = base^-k,   ∂LC1/∂rho = -k·D·LC1/base (0 where rho < 0),   ∂LC1/∂k = -ln(base)·LC1
#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace agf::ops {

struct Lc1 {
  double base;   // 1 + D·max(rho, 0)
  double power;  // base^(-k) = ∂LC1/∂G
  double value;  // G · power
};

AGF_HOST_DEVICE inline Lc1 lc1_at(double G, double rho, double k, int64_t distance) {
  const double base = 1.0 + static_cast<double>(distance) * (rho < 0.0 ? 0.0 : rho);  // std::max(rho, 0): NaN stays NaN
  const double power = std::pow(base, -k);
  return {base, power, G * power};
}

}  // namespace agf::ops
