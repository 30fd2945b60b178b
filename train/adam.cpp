#include "train/adam.h"

#include <cmath>

#include "core/strided_loop.h"
#include "ops/cpu/lane_sum.h"
#include "train/adam_update.h"
#ifdef AGF_WITH_CUDA
#include "train/cuda/adam_kernels.h"
#endif

namespace agf::train {

#ifdef AGF_WITH_CUDA
// Parameters and gradients on a GPU: the same arithmetic by the kernels of train/cuda/adam_kernels.h.
namespace {
void step_on_cuda(const std::string& name, const Tensor& theta, const Tensor& grad, const Tensor& m, const Tensor& v,
                  const AdamConstants& constants) {
  AGF_CHECK(is_floating(theta.dtype()), "Adam::step: parameter '{}' is {}, not floating-point", name,
            theta.description());
  check_same_dtype(theta, grad, "Adam::step");
  cuda::adam_update_elements(theta.dtype(), theta.raw_data(), m.raw_data(), v.raw_data(), grad.raw_data(), grad.numel(),
                             constants, theta.device().index);
}

// Σ g² over the gradients that live on a GPU: one reduction per tensor into its own slot of a device
// array, queued without waiting, then a single read of all the slots.
double cuda_sum_of_squares(const std::vector<Variable>& parameters) {
  std::vector<Tensor> grads;
  for (const Variable& parameter : parameters) {
    const Tensor& grad = parameter.grad();
    if (grad.defined() && grad.device().is_cuda()) grads.push_back(grad.contiguous());
  }
  if (grads.empty()) return 0.0;
  const Device device = grads.front().device();
  for (const Tensor& grad : grads) check_same_device(grads.front(), grad, "clip_grad_norm");
  const int64_t count = static_cast<int64_t>(grads.size());
  const Tensor slots = Tensor::empty({count}, DType::f64, device);
  const Tensor partials = Tensor::empty({count, cuda::kSquarePartials}, DType::f64, device);
  for (int64_t k = 0; k < count; ++k) {
    AGF_CHECK(is_floating(grads[k].dtype()), "clip_grad_norm: gradient {} is not floating-point",
              grads[k].description());
    cuda::sum_of_squares(grads[k].dtype(), grads[k].raw_data(), grads[k].numel(),
                         static_cast<double*>(partials.raw_data()) + k * cuda::kSquarePartials,
                         static_cast<double*>(slots.raw_data()) + k, device.index);
  }
  double squares = 0;
  for (double value : slots.to_double_vector()) squares += value;  // the one host read
  return squares;
}
}  // namespace
#endif

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
  const AdamConstants constants{b1, b2, eps, lr, correction1, correction2};
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    const Variable& parameter = parameters_[p].second;
    if (!parameter.grad().defined()) continue;
    const Tensor grad = parameter.grad().contiguous();
    // θ, g, m and v on one device (a model moved after its optimizer was made is not): the CPU loop
    // would read a GPU tensor's memory on the host, a kernel a CPU tensor's.
    for (const Tensor* other : std::initializer_list<const Tensor*>{&grad, &first_moment_[p], &second_moment_[p]}) {
      check_same_device(parameter.data(), *other, "Adam::step");
    }
#ifdef AGF_WITH_CUDA
    if (parameter.data().device().is_cuda()) {  // the same update, by a kernel
      step_on_cuda(parameters_[p].first, parameter.data(), grad, first_moment_[p], second_moment_[p], constants);
      continue;
    }
#endif
    // A gradient on a GPU would be read through a device pointer here: refuse it, naming both tensors.
    check_same_device(parameter.data(), grad, "Adam::step");
    dispatch_floating(parameter.dtype(), "Adam::step", [&]<class T>() {
      T* theta = parameter.data().data<T>();
      T* m = first_moment_[p].data<T>();
      T* v = second_moment_[p].data<T>();
      const T* g = grad.data<T>();
      // By value: a pointer captured by reference is reloaded after every store (the store might change it),
      // which keeps the loop scalar; by value, it vectorizes.
      parallel_for(parameter.data().numel(), 8, [theta, m, v, g, constants](int64_t i) {
        double theta_i = theta[i], m_i = m[i], v_i = v[i];
        adam_update(theta_i, m_i, v_i, g[i], constants);
        m[i] = static_cast<T>(m_i);
        v[i] = static_cast<T>(v_i);
        theta[i] = static_cast<T>(theta_i);
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
    for (auto [prefix, moment] :
         {std::pair{"exp_avg.", &first_moment_[p]}, std::pair{"exp_avg_sq.", &second_moment_[p]}}) {
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

double clip_grad_norm(const std::vector<Variable>& parameters, double max_norm) {
  double squares = 0;
#ifdef AGF_WITH_CUDA
  squares += cuda_sum_of_squares(parameters);
#endif
  for (const Variable& parameter : parameters) {
    if (!parameter.grad().defined() || parameter.grad().device().is_cuda()) continue;
    const Tensor grad = parameter.grad().contiguous();
    dispatch_floating(grad.dtype(), "clip_grad_norm", [&]<class T>() {
      const T* g = grad.data<T>();
      // Σ g² in f64 lanes (a fixed order that vectorizes; ops/cpu/lane_sum.h), parameter after parameter
      squares += ops::cpu::lane_sum(grad.numel(), [g](int64_t i) { return static_cast<double>(g[i]) * g[i]; });
    });
  }
  const double norm = std::sqrt(squares);
  if (max_norm > 0 && norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (const Variable& parameter : parameters) {
      if (!parameter.grad().defined()) continue;
      Tensor grad = parameter.grad().contiguous();
#ifdef AGF_WITH_CUDA
      if (grad.device().is_cuda()) {
        cuda::scale_in_place(grad.dtype(), grad.raw_data(), grad.numel(), scale, grad.device().index);
        parameter.set_grad(grad);
        continue;
      }
#endif
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
