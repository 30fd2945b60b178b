// Host side of the CUDA embedding: the checks of ops/cpu/embedding.cpp (ids checked on the GPU, reported at
// the next synchronisation: ops/cuda/id_check.h), the launches.
#include "ops/cuda/embedding.h"

#include "ops/cuda/embedding_kernels.h"
#include "ops/cuda/id_check.h"

namespace agf::ops::cuda {

namespace {
Tensor checked_ids(const Tensor& ids_in, int64_t vocabulary_size, const char* op) {
  check_defined(ids_in, op, "ids");
  AGF_CHECK(is_integer(ids_in.dtype()), "{}: ids must be i32 or i64, got {}", op, ids_in.description());
  const Tensor ids = ids_in.contiguous();
  IndexRange range;
  range.upper = vocabulary_size;
  check_indices(ids, range, op);
  return ids;
}
}  // namespace

Tensor embedding_forward(const Tensor& weight_in, const Tensor& ids_in) {
  check_defined(weight_in, "embedding", "weight");
  AGF_CHECK(weight_in.dim() == 2, "embedding: weight must be [V, D], got {}", weight_in.description());
  const Tensor weight = weight_in.contiguous();
  const int64_t vocabulary = weight.size(0), features = weight.size(1);
  const Tensor ids = checked_ids(ids_in, vocabulary, "embedding");
  Shape shape = ids.shape();
  shape.push_back(features);
  Tensor out = Tensor::empty(shape, weight.dtype(), weight.device());
  agf::cuda::embedding_gather(weight.dtype(), weight.raw_data(), vocabulary, ids.dtype(), ids.raw_data(),
                              out.raw_data(), ids.numel(), features, weight.device().index);
  return out;
}

Tensor embedding_backward(const Tensor& grad_in, const Tensor& ids_in, int64_t vocabulary_size) {
  check_defined(grad_in, "embedding_backward", "grad");
  AGF_CHECK(is_floating(grad_in.dtype()), "embedding_backward: needs a floating-point grad, got {}",
            grad_in.description());
  AGF_CHECK(grad_in.dim() >= 1, "embedding_backward: grad must have a feature axis, got {}", grad_in.description());
  const Tensor grad = grad_in.contiguous();
  const int64_t features = grad.size(-1);
  const Tensor ids = checked_ids(ids_in, vocabulary_size, "embedding_backward");
  AGF_CHECK(ids.numel() * features == grad.numel(), "embedding_backward: grad {} does not match {} ids",
            grad.description(), ids.numel());
  const Device device = grad.device();
  // The sums are accumulated in f32 (f64 for f64) and rounded once to the grad's dtype.
  const DType accumulate = grad.dtype() == DType::f64 ? DType::f64 : DType::f32;
  Tensor table = Tensor::zeros({vocabulary_size, features}, accumulate, device);
  agf::cuda::embedding_scatter_add(grad.dtype(), grad.raw_data(), ids.dtype(), ids.raw_data(), table.raw_data(),
                                   vocabulary_size, ids.numel(), features, device.index);
  return table.dtype() == grad.dtype() ? table : table.to(grad.dtype());
}

}  // namespace agf::ops::cuda
