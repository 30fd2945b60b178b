#pragma once
// The gravitational positional table (agf-b, agf-m, agf-f) and its backward on the GPU, in double
// (ops/cuda/positional_table_kernels.cu): the same formulas as the CPU's positional_table_forward and
// positional_table_backward (ops/attention_positional.h), so that training needs no host round trip for
// the table. Plain C++.
#include <cstdint>

namespace agf::cuda {

// Device pointers to f64 parameters, laid out as ops/attention_positional.h says:
//   G, rho [2·H];  lc2 [2·H·L] (agf-m, agf-f; null for agf-b);  lc3 [2·H·L·width] (agf-f; null otherwise);
//   k: a device scalar when learnable (k_pointer), else k_value.
struct GravitationalTable {
  int64_t heads = 1, distances = 1, max_distance = 1;  // H, D = 0 .. distances-1, L
  int64_t width = 1;                                   // head_dim for agf-f, else 1
  const double* G = nullptr;
  const double* rho = nullptr;
  const double* lc2 = nullptr;
  const double* lc3 = nullptr;
  const double* k_pointer = nullptr;
  double k_value = 2;
};

// table [2, H, distances, width]:  C = LC1 · lc2[i] · lc3[i, j]  (i = min(D, L-1); absent levels are 1).
void launch_gravitational_table(const GravitationalTable& t, double* table, int device);

// grad_table: ∂L/∂table, [2, H, distances, width]. Writes ∂L/∂G and ∂L/∂rho [2·H], the per-(δ, h) parts
// of ∂L/∂k [2·H] (the caller sums them), and ∂L/∂lc2, ∂L/∂lc3 where those parameters exist.
void launch_gravitational_table_backward(const GravitationalTable& t, const double* grad_table, double* grad_G,
                                         double* grad_rho, double* grad_k_parts, double* grad_lc2, double* grad_lc3,
                                         int device);

}  // namespace agf::cuda
