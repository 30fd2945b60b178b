#include "nn/linear.h"

#include <cmath>

#include "autograd/functions.h"

namespace agf::nn {

Linear::Linear(int64_t in_features, int64_t out_features, Generator& generator, DType dtype, bool bias)
    : in_features_(in_features), out_features_(out_features) {
  const double bound = std::sqrt(6.0 / static_cast<double>(in_features + out_features));
  weight_ = register_parameter("weight", uniform({out_features, in_features}, generator, -bound, bound, dtype));
  if (bias) bias_ = register_parameter("bias", Tensor::zeros({out_features}, dtype));
}

Variable Linear::forward(const Variable& x) const {
  AGF_CHECK(x.dim() >= 1 && x.size(-1) == in_features_, "Linear({} -> {}): input {} does not end in {} features",
            in_features_, out_features_, x.data().description(), in_features_);
  Shape out_shape = x.shape();
  out_shape.back() = out_features_;
  const Variable rows = reshape(x, {-1, in_features_});
  Variable y = matmul(rows, transpose(weight_, 0, 1));
  if (bias_.defined()) y = y + bias_;
  return reshape(y, out_shape);
}

}  // namespace agf::nn
