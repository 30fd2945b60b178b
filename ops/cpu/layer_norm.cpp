#include "ops/layer_norm.h"

#include <omp.h>

#include <cmath>
#include <vector>

#include "core/strided_loop.h"
#include "ops/cpu/lane_sum.h"
#include "ops/device_route.h"
#ifdef AGF_WITH_CUDA
#include "ops/cuda/layer_norm.h"
#endif

namespace agf::ops {

namespace {
void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* op) {
  check_defined(x, op, "x");
  check_cpu(x, op);
  AGF_CHECK(x.dim() >= 1, "{}: x must have at least one axis, got {}", op, x.description());
  const int64_t features = x.size(-1);
  for (const Tensor* parameter : {&weight, &bias}) {
    check_defined(*parameter, op, "weight/bias");
    check_same_dtype(x, *parameter, op);
    AGF_CHECK(parameter->shape() == Shape{features}, "{}: weight and bias must be [{}] for x {}, got {}", op, features,
              x.description(), parameter->description());
  }
}
}  // namespace

LayerNormResult layer_norm_forward(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in, double eps) {
  AGF_CUDA_ROUTE(on_cuda("layer_norm", x_in, weight_in, bias_in),
                 cuda::layer_norm_forward(x_in, weight_in, bias_in, eps));
  check_layer_norm(x_in, weight_in, bias_in, "layer_norm");
  const Tensor x = x_in.contiguous(), weight = weight_in.contiguous(), bias = bias_in.contiguous();
  const int64_t features = x.size(-1);
  const int64_t rows = features ? x.numel() / features : 0;
  LayerNormResult result{Tensor::empty(x.shape(), x.dtype(), x.device()), Tensor::empty({rows}, x.dtype(), x.device()),
                         Tensor::empty({rows}, x.dtype(), x.device())};
  dispatch_floating(x.dtype(), "layer_norm", [&]<class T>() {
    const T* in = x.data<T>();
    const T* w = weight.data<T>();
    const T* b = bias.data<T>();
    T* out = result.y.data<T>();
    T* means = result.mean.data<T>();
    T* rstds = result.rstd.data<T>();
    parallel_for(rows, features * 4, [&](int64_t row) {
      const T* v = in + row * features;
      // μ = Σ v / F,  rstd = 1 / sqrt(Σ (v − μ)² / F + ε), each sum in f64 lanes (ops/cpu/lane_sum.h)
      const double mu = cpu::lane_sum(features, [v](int64_t i) { return static_cast<double>(v[i]); }) /
                        static_cast<double>(features);
      const double squares = cpu::lane_sum(features, [v, mu](int64_t i) {
        const double centred = v[i] - mu;
        return centred * centred;
      });
      const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(features) + eps);
      means[row] = static_cast<T>(mu);
      rstds[row] = static_cast<T>(rstd);
      T* o = out + row * features;
      for (int64_t i = 0; i < features; ++i) o[i] = static_cast<T>((v[i] - mu) * rstd) * w[i] + b[i];
    });
  });
  return result;
}

LayerNormGradients layer_norm_backward(const Tensor& grad_in, const Tensor& x_in, const Tensor& weight_in,
                                       const Tensor& mean, const Tensor& rstd) {
  AGF_CUDA_ROUTE(on_cuda("layer_norm_backward", grad_in, x_in, weight_in, mean, rstd),
                 cuda::layer_norm_backward(grad_in, x_in, weight_in, mean, rstd));
  const Tensor grad = grad_in.contiguous(), x = x_in.contiguous(), weight = weight_in.contiguous();
  AGF_CHECK(grad.shape() == x.shape(), "layer_norm_backward: grad {} does not match x {}", grad.description(),
            x.description());
  const int64_t features = x.size(-1);
  const int64_t rows = features ? x.numel() / features : 0;
  LayerNormGradients result{Tensor::empty(x.shape(), x.dtype(), x.device()),
                            Tensor::zeros({features}, x.dtype(), x.device()),
                            Tensor::zeros({features}, x.dtype(), x.device())};
  dispatch_floating(x.dtype(), "layer_norm_backward", [&]<class T>() {
    const T* g = grad.data<T>();
    const T* in = x.data<T>();
    const T* w = weight.data<T>();
    const T* means = mean.data<T>();
    const T* rstds = rstd.data<T>();
    T* grad_x = result.x.data<T>();
    // Per-thread partial sums of dL/dw and dL/db, added up at the end (no atomics in the loop).
    const int threads = rows * features >= kParallelGrain ? omp_get_max_threads() : 1;
    std::vector<double> partial_w(static_cast<std::size_t>(threads * features), 0.0);
    std::vector<double> partial_b(static_cast<std::size_t>(threads * features), 0.0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < rows; ++row) {
      const int thread = omp_get_thread_num();
      double* pw = partial_w.data() + thread * features;
      double* pb = partial_b.data() + thread * features;
      const T* gr = g + row * features;
      const T* v = in + row * features;
      const double mu = means[row], r = rstds[row];
      // ĝ = g·w, x̂ = (v − μ)·rstd: the row's means of ĝ and ĝ·x̂ (f64 lanes), and its terms of dL/dw, dL/db
      const double mean_g_hat = cpu::lane_sum(features,
                                              [gr, w](int64_t i) { return static_cast<double>(gr[i]) * w[i]; }) /
                                static_cast<double>(features);
      const double mean_g_hat_x_hat = cpu::lane_sum(features,
                                                    [gr, w, v, mu, r](int64_t i) {
                                                      return static_cast<double>(gr[i]) * w[i] * ((v[i] - mu) * r);
                                                    }) /
                                      static_cast<double>(features);
      for (int64_t i = 0; i < features; ++i) {
        const double x_hat = (v[i] - mu) * r;
        pw[i] += gr[i] * x_hat;
        pb[i] += gr[i];
      }
      T* gx = grad_x + row * features;
      for (int64_t i = 0; i < features; ++i) {
        const double x_hat = (v[i] - mu) * r;
        gx[i] = static_cast<T>(r * (static_cast<double>(gr[i]) * w[i] - mean_g_hat - x_hat * mean_g_hat_x_hat));
      }
    }
    T* grad_w = result.weight.data<T>();
    T* grad_b = result.bias.data<T>();
    for (int64_t i = 0; i < features; ++i) {
      double total_w = 0, total_b = 0;
      for (int thread = 0; thread < threads; ++thread) {
        total_w += partial_w[thread * features + i];
        total_b += partial_b[thread * features + i];
      }
      grad_w[i] = static_cast<T>(total_w);
      grad_b[i] = static_cast<T>(total_b);
    }
  });
  return result;
}

}  // namespace agf::ops
