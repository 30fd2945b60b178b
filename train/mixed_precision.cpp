#include "train/mixed_precision.h"

#include <cmath>

#include "ops/cpu/gemm_bf16.h"
#include "ops/elementwise.h"

namespace agf::train {

Precision parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "fp16") return Precision::fp16;
  if (name == "bf16") return Precision::bf16;
  fail("--precision: expected fp32, fp16 or bf16, got '{}'", name);
}

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
  }
  return "?";
}

DType accumulation_dtype(DType dtype) { return dtype == DType::f16 || dtype == DType::bf16 ? DType::f32 : dtype; }

MixedPrecisionOptions mixed_precision_options(Precision precision, const Device& device) {
  MixedPrecisionOptions options;
  if (device.is_cpu() && precision == Precision::bf16) return options;  // f32 tensors, bf16 products (as fp32 here)
  switch (precision) {
    case Precision::fp32: return options;
    case Precision::fp16:
      options.compute_dtype = DType::f16;
      options.master_copies = true;
      options.dynamic_loss_scaling = true;
      return options;
    case Precision::bf16:
      options.compute_dtype = DType::bf16;
      options.master_copies = true;
      return options;
  }
  fail("unknown precision {}", static_cast<int>(precision));
}

void check_precision_usable(Precision precision, const Device& device, std::string_view command) {
  if (device.is_cuda() || precision == Precision::fp32) return;
  AGF_CHECK(precision == Precision::bf16,
            "{}: --precision {} needs --device cuda: the CPU computes in f32 and f64 "
            "(and, with --precision bf16, matrix products with bf16 operands)",
            command, precision_name(precision));
  const std::string missing = ops::cpu::bf16_unavailable_reason();
  AGF_CHECK(missing.empty(), "{}: --precision bf16 on the CPU: {}; use --precision fp32 here, or --device cuda",
            command, missing);
}

ops::cpu::MatmulPrecision cpu_matmul_precision(Precision precision, const Device& device) {
  return device.is_cpu() && precision == Precision::bf16 ? ops::cpu::MatmulPrecision::bf16
                                                         : ops::cpu::MatmulPrecision::f32;
}

namespace {

// θ: f32 clones of the parameters (same device), or the parameters themselves without master copies.
std::vector<std::pair<std::string, Variable>>
make_masters(const std::vector<std::pair<std::string, Variable>>& parameters, const MixedPrecisionOptions& options) {
  AGF_CHECK(options.master_copies || options.compute_dtype == DType::f32,
            "mixed precision: computing in {} needs f32 master copies of the weights",
            dtype_name(options.compute_dtype));
  if (!options.master_copies) return parameters;
  std::vector<std::pair<std::string, Variable>> masters;
  for (const auto& [name, parameter] : parameters) {
    AGF_CHECK(parameter.dtype() == DType::f32,
              "mixed precision: parameter '{}' is {}; the f32 masters are made from "
              "f32 values (convert the model after creating the optimizer, never before)",
              name, parameter.data().description());
    masters.emplace_back(name, Variable(parameter.data().clone(), true));
  }
  return masters;
}

}  // namespace

MixedPrecisionOptimizer::MixedPrecisionOptimizer(std::vector<std::pair<std::string, Variable>> parameters,
                                                 const MixedPrecisionOptions& options)
    : parameters_(std::move(parameters)),
      masters_(make_masters(parameters_, options)),
      master_copies_(options.master_copies),
      adam_(masters_, options.adam),
      scaler_(options.dynamic_loss_scaling ? LossScaler(options.scaler) : LossScaler::disabled()) {
  if (!master_copies_) return;
  // h = half(θ): the model's Variables now hold the compute copies; their gradients sum in f32.
  for (auto& [name, parameter] : parameters_) {
    parameter.mutable_data() = parameter.data().to(options.compute_dtype);
    parameter.accumulate_grad_in(DType::f32);
    parameter.zero_grad();
  }
}

UpdateOutcome MixedPrecisionOptimizer::step(double lr, double clip_norm) {
  UpdateOutcome outcome;
  outcome.loss_scale = scaler_.scale();
  // g = (S·∂L/∂h) · (1/S), in f32 (backward summed the half contributions in f32). S is a power of two,
  // so the product is exact (barring f32 subnormals).
  const double unscale = 1.0 / outcome.loss_scale;
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    const Tensor& scaled = parameters_[p].second.grad();
    const Variable& master = masters_[p].second;
    if (!scaled.defined()) {
      master.zero_grad();
      continue;
    }
    // f32 already, unless set by hand (set_grad) in the compute dtype; on the gradient's device.
    const Tensor wide = scaled.dtype() == DType::f32 || !master_copies_ ? scaled : scaled.to(DType::f32);
    master.set_grad(unscale == 1.0 ? wide : ops::mul_scalar(wide, unscale));
  }
  // One global check: ‖g‖₂ is finite exactly when every element of every gradient is (the squares are
  // summed in f64, which cannot overflow for f32 values). Clipping needs the norm anyway.
  std::vector<Variable> weights;
  for (const auto& [name, master] : masters_) weights.push_back(master);
  outcome.grad_norm = clip_grad_norm(weights, clip_norm);
  outcome.applied = scaler_.update(std::isfinite(outcome.grad_norm));
  if (outcome.applied) {
    adam_.step(lr);
    if (master_copies_) {
      // h ← half(θ) in place (round to nearest even).
      for (std::size_t p = 0; p < parameters_.size(); ++p) {
        Tensor compute = parameters_[p].second.data();
        compute.copy_from(masters_[p].second.data());
      }
    }
  }
  zero_grad();
  return outcome;
}

void MixedPrecisionOptimizer::load_state(const std::vector<std::pair<std::string, Tensor>>& moments,
                                         int64_t steps_taken, const LossScalerState& scaler) {
  AGF_CHECK(scaler.skipped_steps <= steps_taken, "mixed precision: {} skipped steps but only {} steps taken",
            scaler.skipped_steps, steps_taken);
  scaler_.load_state(scaler);
  adam_.load_state(moments, steps_taken - scaler.skipped_steps);
}

void MixedPrecisionOptimizer::zero_grad() {
  for (const auto& [name, parameter] : parameters_) parameter.zero_grad();
  for (const auto& [name, master] : masters_) master.zero_grad();
}

}  // namespace agf::train
