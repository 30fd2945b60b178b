#include "nn/embedding.h"

#include <cmath>

#include "autograd/functions.h"

namespace agf::nn {

Embedding::Embedding(int64_t vocabulary_size, int64_t features, Generator& generator, DType dtype) {
  AGF_CHECK(vocabulary_size > 0 && features > 0, "Embedding: sizes must be positive, got [{}, {}]", vocabulary_size,
            features);
  weight_ = register_parameter("weight", normal({vocabulary_size, features}, generator, 0.0,
                                                1.0 / std::sqrt(static_cast<double>(features)), dtype));
}

Variable Embedding::forward(const Tensor& ids) const { return embedding(weight_, ids); }

LayerNorm::LayerNorm(int64_t features, double eps, DType dtype) : eps_(eps) {
  weight_ = register_parameter("weight", Tensor::ones({features}, dtype));
  bias_ = register_parameter("bias", Tensor::zeros({features}, dtype));
}

Variable LayerNorm::forward(const Variable& x) const { return layer_norm(x, weight_, bias_, eps_); }

Variable DropoutStream::apply(const Variable& x, double p, bool training) {
  if (!training || p <= 0.0) return x;
  const uint64_t offset = generator_.advance(x.data().numel());
  return dropout(x, p, generator_.seed(), offset);
}

}  // namespace agf::nn
