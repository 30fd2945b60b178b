#include "ops/embedding.h"

#include <algorithm>
#include <cstring>

#include "core/strided_loop.h"
#include "ops/device_route.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/embedding.h"
#endif

namespace agf::ops {

namespace {
// Validated, contiguous i64 copy of the ids: every id must index a row of the table.
std::vector<int64_t> checked_ids(const Tensor& ids, int64_t vocabulary_size, const char* op) {
  check_defined(ids, op, "ids");
  AGF_CHECK(is_integer(ids.dtype()), "{}: ids must be i32 or i64, got {}", op, ids.description());
  std::vector<int64_t> values = ids.to_int_vector();
  for (std::size_t i = 0; i < values.size(); ++i) {
    AGF_CHECK(values[i] >= 0 && values[i] < vocabulary_size, "{}: id {} at position {} is outside [0, {})", op,
              values[i], i, vocabulary_size);
  }
  return values;
}
}  // namespace

Tensor embedding_forward(const Tensor& weight_in, const Tensor& ids) {
  AGF_CUDA_ROUTE(on_cuda("embedding", weight_in, ids), cuda::embedding_forward(weight_in, ids));
  check_defined(weight_in, "embedding", "weight");
  check_cpu(weight_in, "embedding");
  AGF_CHECK(weight_in.dim() == 2, "embedding: weight must be [V, D], got {}", weight_in.description());
  const Tensor weight = weight_in.contiguous();
  const int64_t vocabulary = weight.size(0), features = weight.size(1);
  const std::vector<int64_t> rows = checked_ids(ids, vocabulary, "embedding");
  Shape shape = ids.shape();
  shape.push_back(features);
  Tensor out = Tensor::empty(shape, weight.dtype(), weight.device());
  const std::size_t row_bytes = static_cast<std::size_t>(features) * dtype_size(weight.dtype());
  const char* table = static_cast<const char*>(weight.raw_data());
  char* destination = static_cast<char*>(out.raw_data());
  parallel_for(static_cast<int64_t>(rows.size()), features,
               [&](int64_t i) { std::memcpy(destination + i * row_bytes, table + rows[i] * row_bytes, row_bytes); });
  return out;
}

Tensor embedding_backward(const Tensor& grad_in, const Tensor& ids, int64_t vocabulary_size) {
  AGF_CUDA_ROUTE(on_cuda("embedding_backward", grad_in, ids), cuda::embedding_backward(grad_in, ids, vocabulary_size));
  check_cpu(grad_in, "embedding_backward");
  const Tensor grad = grad_in.contiguous();
  const int64_t features = grad.size(-1);
  const std::vector<int64_t> rows = checked_ids(ids, vocabulary_size, "embedding_backward");
  AGF_CHECK(static_cast<int64_t>(rows.size()) * features == grad.numel(),
            "embedding_backward: grad {} does not match {} ids", grad.description(), rows.size());
  Tensor grad_weight = Tensor::zeros({vocabulary_size, features}, grad.dtype(), grad.device());
  dispatch_floating(grad.dtype(), "embedding_backward", [&]<class T>() {
    const T* g = grad.data<T>();
    T* table = grad_weight.data<T>();
    // Parallel over blocks of feature columns: each thread owns a slice of every row, so no two threads collide.
    // A block is one 64-byte line of f32, added a vector at a time: each id touches one line of the table per
    // block (a block of one column touched a line per element). Each element still sums its ids in order.
    constexpr int64_t kColumnBlock = 16;
    const int64_t blocks = (features + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(static) if (static_cast <int64_t>(rows.size()) * features >= kParallelGrain)
    for (int64_t block = 0; block < blocks; ++block) {
      const int64_t first = block * kColumnBlock, width = std::min(kColumnBlock, features - first);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        T* line = table + rows[i] * features + first;
        const T* values = g + static_cast<int64_t>(i) * features + first;
        for (int64_t c = 0; c < width; ++c) line[c] += values[c];
      }
    }
  });
  return grad_weight;
}

}  // namespace agf::ops
