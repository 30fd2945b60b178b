#pragma once
// Linear: y = x·Wᵀ + b with W [out, in] (PyTorch's layout, so checkpoints load there unchanged).
#include "core/random.h"
#include "nn/module.h"

namespace agf::nn {

class Linear : public Module {
 public:
  // Weights: Xavier-uniform, U(±√(6/(in+out))); bias: zeros (fairseq's Transformer initialisation).
  Linear(int64_t in_features, int64_t out_features, Generator& generator, DType dtype = DType::f32, bool bias = true);

  // x [..., in] -> [..., out]; the leading axes are flattened so the product is one large GEMM.
  Variable forward(const Variable& x) const;

  const Variable& weight() const { return weight_; }
  const Variable& bias() const { return bias_; }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }

 private:
  int64_t in_features_, out_features_;
  Variable weight_, bias_;
};

}  // namespace agf::nn
