#pragma once
// Matrix products: a [..., M, K] @ b [..., K, N] -> [..., M, N]; batch axes broadcast (NumPy matmul).
// Transposed views (a.transpose(-1, -2)) are read in place: no copy is made for either layout.
#include <utility>

#include "core/tensor.h"

namespace agf::ops {

Tensor matmul(const Tensor& a, const Tensor& b);

// C = A·B:  dL/dA = G·Bᵀ,  dL/dB = Aᵀ·G   (summed over broadcast batch axes)
std::pair<Tensor, Tensor> matmul_backward(const Tensor& grad, const Tensor& a, const Tensor& b);

}  // namespace agf::ops
