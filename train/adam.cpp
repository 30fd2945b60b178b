#include "train/adam.h"

#include <cmath>

#include "core/strided_loop.h"

namespace agf::train {

Adam::Adam(std::vector<std::pair<std::string, Variable>> parameters, AdamOptions options)
    : parameters_(std::move(parameters)), options_(options) {
  for (const auto& [name, parameter] : parameters_) {
    AGF_CHECK(parameter.data().is_contiguous(), "Adam: parameter '{}' is not contiguous", name);
    // The moments live beside their parameter, in its dtype (f32 masters under mixed precision).
    first_moment_.push_back(Tensor::zeros(parameter.shape(), parameter.dtype(), parameter.data().device()));
    second_moment_.push_back(Tensor::zeros(parameter.shape(), parameter.dtype(), parameter.data().device()));
  }
}

void Adam::step(double lr) {
  ++steps_;
  const double b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
  const double correction1 = 1.0 - std::pow(b1, static_cast<double>(steps_));
  const double correction2 = 1.0 - std::pow(b2, static_cast<double>(steps_));
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    const Variable& parameter = parameters_[p].second;
    if (!parameter.grad().defined()) continue;
    const Tensor grad = parameter.grad().contiguous();
    dispatch_floating(parameter.dtype(), "Adam::step", [&]<class T>() {
      T* theta = parameter.data().data<T>();
      T* m = first_moment_[p].data<T>();
      T* v = second_moment_[p].data<T>();
      const T* g = grad.data<T>();
      parallel_for(parameter.data().numel(), 8, [&](int64_t i) {
        const double gi = g[i];
        const double mi = b1 * m[i] + (1 - b1) * gi;
        const double vi = b2 * v[i] + (1 - b2) * gi * gi;
        m[i] = static_cast<T>(mi);
        v[i] = static_cast<T>(vi);
        theta[i] = static_cast<T>(theta[i] - lr * (mi / correction1) / (std::sqrt(vi / correction2) + eps));
      });
    });
  }
}

void Adam::zero_grad() {
  for (const auto& [name, parameter] : parameters_) parameter.zero_grad();
}

std::vector<std::pair<std::string, Tensor>> Adam::state() const {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    tensors.emplace_back("exp_avg." + parameters_[p].first, first_moment_[p]);
    tensors.emplace_back("exp_avg_sq." + parameters_[p].first, second_moment_[p]);
  }
  return tensors;
}

void Adam::load_state(const std::vector<std::pair<std::string, Tensor>>& tensors, int64_t steps) {
  auto find = [&](const std::string& name) -> const Tensor& {
    for (const auto& [key, tensor] : tensors) {
      if (key == name) return tensor;
    }
    fail("Adam::load_state: no optimizer tensor '{}'", name);
  };
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    const std::string& name = parameters_[p].first;
    for (auto [prefix, moment] : {std::pair{"exp_avg.", &first_moment_[p]}, std::pair{"exp_avg_sq.", &second_moment_[p]}}) {
      const Tensor& saved = find(prefix + name);
      AGF_CHECK(saved.shape() == moment->shape(), "Adam::load_state: '{}{}' is {} but the parameter is {}", prefix,
                name, saved.description(), moment->description());
      if (moment->device().is_cpu()) {
        moment->copy_from(saved);
      } else {
        // Converted on the host, then moved: a fresh tensor on the moment's device.
        *moment = saved.to(Device::cpu()).to(moment->dtype()).contiguous().to(moment->device());
      }
    }
  }
  steps_ = steps;
}

double inverse_sqrt_lr(double peak, int64_t step, int64_t warmup) {
  AGF_CHECK(warmup > 0, "learning-rate schedule: warmup must be positive, got {}", warmup);
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double w = static_cast<double>(warmup);
  return peak * std::min(s / w, std::sqrt(w / s));
}

double clip_grad_norm(const std::vector<Variable>& parameters, double max_norm) {
  double squares = 0;
  for (const Variable& parameter : parameters) {
    if (!parameter.grad().defined()) continue;
    const Tensor grad = parameter.grad().contiguous();
    dispatch_floating(grad.dtype(), "clip_grad_norm", [&]<class T>() {
      const T* g = grad.data<T>();
      for (int64_t i = 0; i < grad.numel(); ++i) squares += static_cast<double>(g[i]) * g[i];
    });
  }
  const double norm = std::sqrt(squares);
  if (max_norm > 0 && norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (const Variable& parameter : parameters) {
      if (!parameter.grad().defined()) continue;
      Tensor grad = parameter.grad().contiguous();
      dispatch_floating(grad.dtype(), "clip_grad_norm", [&]<class T>() {
        T* g = grad.data<T>();
        for (int64_t i = 0; i < grad.numel(); ++i) g[i] = static_cast<T>(g[i] * scale);
      });
      parameter.set_grad(grad);
    }
  }
  return norm;
}

}  // namespace agf::train
