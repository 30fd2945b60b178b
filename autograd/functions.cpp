// Each function: compute the forward with ops/, then record a closure that calls the op's backward.
// Closures capture exactly what the backward needs (inputs, outputs or saved statistics).
#include "autograd/functions.h"

#include "ops/concat.h"
#include "ops/dropout.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/layer_norm.h"
#include "ops/matmul.h"
#include "ops/softmax.h"

namespace agf {

using Grads = std::vector<Tensor>;

// ---- arithmetic ----------------------------------------------------------------------------------------

Variable add(const Variable& a, const Variable& b) {
  return make_result(ops::add(a.data(), b.data()), "add", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) {
    auto [ga, gb] = ops::add_backward(g, sa, sb);
    return Grads{ga, gb};
  });
}

Variable sub(const Variable& a, const Variable& b) {
  return make_result(ops::sub(a.data(), b.data()), "sub", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) {
    auto [ga, gb] = ops::sub_backward(g, sa, sb);
    return Grads{ga, gb};
  });
}

Variable mul(const Variable& a, const Variable& b) {
  return make_result(ops::mul(a.data(), b.data()), "mul", {a, b}, [x = a.data(), y = b.data()](const Tensor& g) {
    auto [ga, gb] = ops::mul_backward(g, x, y);
    return Grads{ga, gb};
  });
}

Variable div(const Variable& a, const Variable& b) {
  return make_result(ops::div(a.data(), b.data()), "div", {a, b}, [x = a.data(), y = b.data()](const Tensor& g) {
    auto [ga, gb] = ops::div_backward(g, x, y);
    return Grads{ga, gb};
  });
}

Variable add_scalar(const Variable& x, double value) {
  return make_result(ops::add_scalar(x.data(), value), "add_scalar", {x}, [](const Tensor& g) { return Grads{g}; });
}

Variable mul_scalar(const Variable& x, double value) {
  return make_result(ops::mul_scalar(x.data(), value), "mul_scalar", {x},
                     [value](const Tensor& g) { return Grads{ops::mul_scalar(g, value)}; });
}

Variable pow(const Variable& x, double exponent) {
  return make_result(ops::pow_scalar(x.data(), exponent), "pow", {x}, [in = x.data(), exponent](const Tensor& g) {
    return Grads{ops::pow_scalar_backward(g, in, exponent)};
  });
}

Variable neg(const Variable& x) {
  return make_result(ops::neg(x.data()), "neg", {x}, [](const Tensor& g) { return Grads{ops::neg(g)}; });
}

// ---- pointwise: backward in terms of the input x or the output y ------------------------------------------

namespace {
using UnaryForward = Tensor (*)(const Tensor&);
using UnaryBackward = Tensor (*)(const Tensor&, const Tensor&);
enum class SavedValue { input, output };

Variable unary(const Variable& x, const char* name, UnaryForward forward, UnaryBackward backward, SavedValue saved) {
  Tensor y = forward(x.data());
  const Tensor keep = saved == SavedValue::input ? x.data() : y;
  return make_result(y, name, {x}, [backward, keep](const Tensor& g) { return Grads{backward(g, keep)}; });
}
}  // namespace

Variable exp(const Variable& x) { return unary(x, "exp", ops::exp, ops::exp_backward, SavedValue::output); }
Variable log(const Variable& x) { return unary(x, "log", ops::log, ops::log_backward, SavedValue::input); }
Variable sqrt(const Variable& x) { return unary(x, "sqrt", ops::sqrt, ops::sqrt_backward, SavedValue::output); }
Variable tanh(const Variable& x) { return unary(x, "tanh", ops::tanh, ops::tanh_backward, SavedValue::output); }
Variable sigmoid(const Variable& x) {
  return unary(x, "sigmoid", ops::sigmoid, ops::sigmoid_backward, SavedValue::output);
}
Variable relu(const Variable& x) { return unary(x, "relu", ops::relu, ops::relu_backward, SavedValue::input); }
Variable gelu_tanh(const Variable& x) {
  return unary(x, "gelu_tanh", ops::gelu_tanh, ops::gelu_tanh_backward, SavedValue::input);
}
Variable gelu_erf(const Variable& x) {
  return unary(x, "gelu_erf", ops::gelu_erf, ops::gelu_erf_backward, SavedValue::input);
}
Variable softmax(const Variable& x) {
  return unary(x, "softmax", ops::softmax_forward, ops::softmax_backward, SavedValue::output);
}
Variable log_softmax(const Variable& x) {
  return unary(x, "log_softmax", ops::log_softmax_forward, ops::log_softmax_backward, SavedValue::output);
}

// ---- linear algebra ----------------------------------------------------------------------------------------

Variable matmul(const Variable& a, const Variable& b) {
  return make_result(ops::matmul(a.data(), b.data()), "matmul", {a, b}, [x = a.data(), y = b.data()](const Tensor& g) {
    auto [ga, gb] = ops::matmul_backward(g, x, y);
    return Grads{ga, gb};
  });
}

// ---- reductions ------------------------------------------------------------------------------------------

Variable sum(const Variable& x, const Axes& axes, bool keepdim) {
  return make_result(ops::sum(x.data(), axes, keepdim), "sum", {x},
                     [shape = x.shape(), axes, keepdim](const Tensor& g) {
                       return Grads{ops::sum_backward(g, shape, axes, keepdim)};
                     });
}

Variable mean(const Variable& x, const Axes& axes, bool keepdim) {
  return make_result(ops::mean(x.data(), axes, keepdim), "mean", {x},
                     [shape = x.shape(), axes, keepdim](const Tensor& g) {
                       return Grads{ops::mean_backward(g, shape, axes, keepdim)};
                     });
}

Variable max(const Variable& x, const Axes& axes, bool keepdim) {
  Tensor y = ops::max(x.data(), axes, keepdim);
  return make_result(y, "max", {x}, [in = x.data(), y, axes, keepdim](const Tensor& g) {
    return Grads{ops::max_backward(g, in, y, axes, keepdim)};
  });
}

// ---- normalization and losses -------------------------------------------------------------------------------

Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, double eps) {
  ops::LayerNormResult forward = ops::layer_norm_forward(x.data(), weight.data(), bias.data(), eps);
  return make_result(forward.y, "layer_norm", {x, weight, bias},
                     [in = x.data(), w = weight.data(), mean = forward.mean, rstd = forward.rstd](const Tensor& g) {
                       ops::LayerNormGradients grads = ops::layer_norm_backward(g, in, w, mean, rstd);
                       return Grads{grads.x, grads.weight, grads.bias};
                     });
}

Variable cross_entropy(const Variable& logits, const Tensor& targets, const ops::CrossEntropyOptions& options) {
  return make_result(ops::cross_entropy_forward(logits.data(), targets, options), "cross_entropy", {logits},
                     [z = logits.data(), targets, options](const Tensor& g) {
                       return Grads{ops::cross_entropy_backward(g, z, targets, options)};
                     });
}

// ---- lookup and regularization ------------------------------------------------------------------------------

Variable embedding(const Variable& weight, const Tensor& ids) {
  return make_result(ops::embedding_forward(weight.data(), ids), "embedding", {weight},
                     [ids, rows = weight.size(0)](const Tensor& g) {
                       return Grads{ops::embedding_backward(g, ids, rows)};
                     });
}

Variable dropout(const Variable& x, double p, uint64_t seed, uint64_t offset) {
  if (p == 0.0) return x;
  return make_result(ops::dropout_forward(x.data(), p, seed, offset), "dropout", {x},
                     [p, seed, offset](const Tensor& g) { return Grads{ops::dropout_backward(g, p, seed, offset)}; });
}

// ---- shape -------------------------------------------------------------------------------------------------

Variable reshape(const Variable& x, const Shape& shape) {
  return make_result(x.data().reshape(shape), "reshape", {x},
                     [original = x.shape()](const Tensor& g) { return Grads{g.reshape(original)}; });
}

Variable permute(const Variable& x, const std::vector<int64_t>& order) {
  Tensor y = x.data().permute(order);
  std::vector<int64_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    inverse[normalize_axis(order[i], x.dim(), "permute")] = static_cast<int64_t>(i);
  return make_result(y, "permute", {x}, [inverse](const Tensor& g) { return Grads{g.permute(inverse)}; });
}

Variable transpose(const Variable& x, int64_t axis_a, int64_t axis_b) {
  return make_result(x.data().transpose(axis_a, axis_b), "transpose", {x},
                     [axis_a, axis_b](const Tensor& g) { return Grads{g.transpose(axis_a, axis_b)}; });
}

// y = x[start:stop:step] along axis  =>  dL/dx is zero except the sliced positions, which receive g
Variable slice(const Variable& x, int64_t axis, int64_t start, int64_t stop, int64_t step) {
  return make_result(x.data().slice(axis, start, stop, step), "slice", {x},
                     [shape = x.shape(), dtype = x.dtype(), axis, start, stop, step](const Tensor& g) {
                       Tensor grad = Tensor::zeros(shape, dtype, g.device());
                       Tensor window = grad.slice(axis, start, stop, step);
                       window.copy_from(g);
                       return Grads{grad};
                     });
}

Variable expand(const Variable& x, const Shape& shape) {
  return make_result(x.data().expand(shape), "expand", {x},
                     [original = x.shape()](const Tensor& g) { return Grads{ops::sum_to(g, original)}; });
}

Variable concat(const std::vector<Variable>& parts, int64_t axis) {
  std::vector<Tensor> tensors;
  std::vector<Shape> shapes;
  for (const Variable& part : parts) {
    tensors.push_back(part.data());
    shapes.push_back(part.shape());
  }
  return make_result(ops::concat(tensors, axis), "concat", parts,
                     [shapes, axis](const Tensor& g) { return ops::concat_backward(g, shapes, axis); });
}

Variable contiguous(const Variable& x) {
  return make_result(x.data().contiguous(), "contiguous", {x}, [](const Tensor& g) { return Grads{g}; });
}

// ---- dtype -------------------------------------------------------------------------------------------------

// y = cast(x)  =>  dL/dx = cast⁻¹(dL/dy): the conversion is the identity on values up to rounding.
Variable cast(const Variable& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return make_result(x.data().to(dtype), "cast", {x},
                     [from = x.dtype()](const Tensor& g) { return Grads{g.to(from)}; });
}

}  // namespace agf
