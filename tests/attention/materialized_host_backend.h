#pragma once
// The materializing attention path's Backend on the CPU, for the tests (ops/attention_materialized_steps.h
// says what a Backend provides; the CUDA one is in ops/cuda/attention.cpp).
#include "ops/attention_materialized_steps.h"

namespace agf::ops::materialized {

// The steps of ops/attention_materialized.h, one worker per row, and each product evaluated from the very
// ColumnMajorProduct that cuBLAS receives: out[i + j·ld_out] = alpha·Σ_l op(first)[i,l]·op(second)[l,j] with
// op(X)[r,c] = X[r + c·ld] (no transpose) or X[c + r·ld] (transposed).
struct HostBackend {
  template <class T>
  static void product(const ColumnMajorProduct& p, T alpha, const T* first, const T* second, T* out, int64_t batch,
                      Device) {
    for (int64_t t = 0; t < batch; ++t) {
      const T* f = first + t * p.stride_first;
      const T* s = second + t * p.stride_second;
      T* o = out + t * p.stride_out;
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          T total = 0;
          for (int64_t l = 0; l < p.k; ++l) {
            const T x = p.transpose_first ? f[l + i * p.ld_first] : f[i + l * p.ld_first];
            const T y = p.transpose_second ? s[j + l * p.ld_second] : s[l + j * p.ld_second];
            total += x * y;
          }
          o[i + j * p.ld_out] = alpha * total;
        }
      }
    }
  }
  static constexpr auto alone = [](auto value, auto) { return value; };  // one worker: nothing to combine
  template <class T>
  static void softmax_rows(const Attention<T>& A, const T* scores, T* weights, T* dropped, Device) {
    for (int64_t row = 0; row < A.rows(); ++row) softmax_row(A, row, 0, 1, alone, scores, weights, dropped);
  }
  template <class T>
  static void softmax_backward_rows(const Attention<T>& A, const T* weights, const T* dropped, const T* scaled_dot,
                                    bool value_coefficient, T* grad, T* pair_table_grad, Device) {
    for (int64_t row = 0; row < A.rows(); ++row) {
      softmax_backward_row(A, row, 0, 1, alone, weights, dropped, scaled_dot, value_coefficient, grad, pair_table_grad);
    }
  }
  template <class T>
  static void diagonal_sums(const Attention<T>& A, const T* pair_values, T* grad_table, Device) {
    for (int64_t entry = 0; entry < A.table_entries(); ++entry)
      diagonal_sum(A, entry, 0, 1, alone, pair_values, grad_table);
  }
  template <class T>
  static void coefficient_product(const Attention<T>& A, const T* weights, T* out, Device) {
    for (int64_t i = 0; i < A.pair_count(); ++i) out[i] = coefficient_product_at(A, weights, i);
  }
  template <class T>
  static void feature_sum_over_features(const Attention<T>& A, const T* x, const T* y, T scale, T* out, Device) {
    for (int64_t i = 0; i < A.pair_count(); ++i) out[i] = feature_sum_over_features_at(A, x, y, scale, i);
  }
  template <class T>
  static void feature_sum_over_keys(const Attention<T>& A, const T* w, const T* y, T scale, T* out, Device) {
    for (int64_t i = 0; i < A.rows() * A.pairs.head_dim; ++i) out[i] = feature_sum_over_keys_at(A, w, y, scale, i);
  }
  template <class T>
  static void feature_sum_over_queries(const Attention<T>& A, const T* w, const T* y, T scale, T* out, Device) {
    const int64_t count = A.pairs.batch * A.pairs.heads * A.pairs.keys * A.pairs.head_dim;
    for (int64_t i = 0; i < count; ++i) out[i] = feature_sum_over_queries_at(A, w, y, scale, i);
  }
  template <class T>
  static void feature_table_gradient(const Attention<T>& A, const T* score_grad, const T* q, const T* k,
                                     const T* dropped, const T* g, const T* v, T scale, T* grad_table, Device) {
    for (int64_t entry = 0; entry < A.table_entries(); ++entry) {
      for (int64_t j = 0; j < A.pairs.head_dim; ++j) {
        grad_table[entry * A.pairs.head_dim + j] = feature_table_gradient_at(A, score_grad, q, k, dropped, g, v, scale,
                                                                             entry, j);
      }
    }
  }
};

}  // namespace agf::ops::materialized
