// Host side of the CUDA layer norm: the checks of ops/cpu/layer_norm.cpp, contiguous operands, the launches.
#include "ops/cuda/layer_norm.h"

#include "ops/cuda/layer_norm_kernels.h"

namespace agf::ops::cuda {

namespace {
// Returns the number of rows of x [..., D].
int64_t check_operands(const char* op, const Tensor& x,
                       std::initializer_list<std::pair<const Tensor*, const char*>> others) {
  check_defined(x, op, "x");
  AGF_CHECK(x.dim() >= 1, "{}: x must have at least one axis, got {}", op, x.description());
  AGF_CHECK(is_floating(x.dtype()), "{}: needs a floating-point tensor, got {}", op, x.description());
  const int64_t features = x.size(-1);
  for (const auto& [tensor, name] : others) {
    check_defined(*tensor, op, name);
    check_same_dtype(x, *tensor, op);
    check_same_device(x, *tensor, op);
  }
  return features ? x.numel() / features : 0;
}

void check_parameter(const char* op, const Tensor& x, const Tensor& parameter) {
  AGF_CHECK(parameter.shape() == Shape{x.size(-1)}, "{}: weight and bias must be [{}] for x {}, got {}", op, x.size(-1),
            x.description(), parameter.description());
}
}  // namespace

LayerNormResult layer_norm_forward(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in, double eps) {
  const char* op = "layer_norm";
  const int64_t rows = check_operands(op, x_in, {{&weight_in, "weight"}, {&bias_in, "bias"}});
  check_parameter(op, x_in, weight_in);
  check_parameter(op, x_in, bias_in);
  const Tensor x = x_in.contiguous(), weight = weight_in.contiguous(), bias = bias_in.contiguous();
  const Device device = x.device();
  const DType statistics = agf::cuda::layer_norm_workspace_dtype(x.dtype());  // f32 for f16/bf16
  LayerNormResult result{Tensor::empty(x.shape(), x.dtype(), device), Tensor::empty({rows}, statistics, device),
                         Tensor::empty({rows}, statistics, device)};
  agf::cuda::layer_norm_rows(x.dtype(), x.raw_data(), weight.raw_data(), bias.raw_data(), result.y.raw_data(),
                             result.mean.raw_data(), result.rstd.raw_data(), rows, x.size(-1), eps, device.index);
  return result;
}

LayerNormGradients layer_norm_backward(const Tensor& grad_in, const Tensor& x_in, const Tensor& weight_in,
                                       const Tensor& mean_in, const Tensor& rstd_in) {
  const char* op = "layer_norm_backward";
  const int64_t rows = check_operands(op, x_in, {{&grad_in, "grad"}, {&weight_in, "weight"}});
  AGF_CHECK(grad_in.shape() == x_in.shape(), "layer_norm_backward: grad {} does not match x {}", grad_in.description(),
            x_in.description());
  check_parameter(op, x_in, weight_in);
  const DType statistics = agf::cuda::layer_norm_workspace_dtype(x_in.dtype());
  for (const Tensor* saved : {&mean_in, &rstd_in}) {
    check_defined(*saved, op, saved == &mean_in ? "mean" : "rstd");
    check_same_device(x_in, *saved, op);
    AGF_CHECK(saved->dtype() == statistics,
              "layer_norm_backward: mean and rstd must be {} (from layer_norm_forward) for x {}, got {}",
              dtype_name(statistics), x_in.description(), saved->description());
    AGF_CHECK(saved->numel() == rows, "layer_norm_backward: mean and rstd must hold {} rows for x {}, got {}", rows,
              x_in.description(), saved->description());
  }
  const Tensor grad = grad_in.contiguous(), x = x_in.contiguous(), weight = weight_in.contiguous();
  const Tensor mean = mean_in.contiguous(), rstd = rstd_in.contiguous();
  const Device device = x.device();
  const int64_t features = x.size(-1);
  LayerNormGradients result{Tensor::empty(x.shape(), x.dtype(), device), Tensor::empty({features}, x.dtype(), device),
                            Tensor::empty({features}, x.dtype(), device)};
  const int64_t chunks = agf::cuda::layer_norm_partial_chunks(rows);
  const Tensor workspace = Tensor::empty({2 * chunks * features}, agf::cuda::layer_norm_workspace_dtype(x.dtype()),
                                         device);
  agf::cuda::layer_norm_backward_rows(x.dtype(), grad.raw_data(), x.raw_data(), weight.raw_data(), mean.raw_data(),
                                      rstd.raw_data(), result.x.raw_data(), result.weight.raw_data(),
                                      result.bias.raw_data(), workspace.raw_data(), rows, features, device.index);
  return result;
}

}  // namespace agf::ops::cuda
