#include "ops/attention_geometry.h"

#include <algorithm>

namespace agf::ops {

AttentionGeometry attention_geometry(const Tensor& q, const Tensor& k, const Tensor& v, PositionalScheme scheme) {
  AGF_CHECK(q.defined() && k.defined() && v.defined(), "attention: q, k and v must be defined");
  AGF_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "attention: q, k, v must be [B, H, T, dk], got {}, {}, {}",
            q.description(), k.description(), v.description());
  check_same_device(q, k, "attention");
  check_same_device(q, v, "attention");
  check_same_dtype(q, k, "attention");
  check_same_dtype(q, v, "attention");
  AGF_CHECK(is_floating(q.dtype()), "attention: q, k, v must be floating point, got {}", q.description());
  AGF_CHECK(k.shape() == v.shape(), "attention: k {} and v {} must have the same shape", k.description(),
            v.description());
  AGF_CHECK(q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3),
            "attention: q {} and k {} must agree in batch, heads and head size", q.description(), k.description());
  AttentionGeometry g;
  g.batch = q.size(0);
  g.heads = q.size(1);
  g.queries = q.size(2);
  g.keys = k.size(2);
  g.head_dim = q.size(3);
  g.distances = std::max<int64_t>({g.queries, g.keys, 1});
  g.width = is_per_feature(scheme) ? g.head_dim : 1;
  return g;
}

void check_attention_options(const AttentionOptions& options) {
  AGF_CHECK(options.dropout >= 0.0 && options.dropout < 1.0, "attention: dropout must be in [0, 1), got {}",
            options.dropout);
}

void check_attention_gradient(const Tensor& grad, const Tensor& q, const AttentionGeometry& g) {
  AGF_CHECK(grad.defined() && grad.shape() == Shape({g.batch, g.heads, g.queries, g.head_dim}),
            "attention_backward: the gradient must be [{}, {}, {}, {}], got {}", g.batch, g.heads, g.queries,
            g.head_dim, grad.defined() ? grad.description() : "undefined");
  check_same_device(grad, q, "attention_backward");
  check_same_dtype(grad, q, "attention_backward");
}

}  // namespace agf::ops
