#pragma once
// Mixed-precision training (docs/mixed-precision.md): the model computes in f16 or bf16, the optimizer
// works on f32 master weights.
//
//   forward/backward   on the model's parameters, the half-precision "compute copies" h = half(θ)
//   loss               in f32: the logits are cast to f32 before the cross-entropy (as PyTorch's autocast)
//   backward seed      ∂(S·L)/∂L = S, the loss scale (train/loss_scaler.h), so the half gradients are S·∂L/∂h
//   accumulate         each half contribution to ∂L/∂h is converted to f32 and summed there (the tied
//                      embedding's three uses, batches of --update-freq), as PyTorch's AMP keeps .grad f32
//   unscale            g = (S·∂L/∂h) · (1/S)        f32; exact: S is a power of two
//   check              ‖g‖₂ over all parameters (clip_grad_norm measures it anyway): not finite ⇒ skip
//   clip               g ← g · c/(‖g‖+1e-6) when ‖g‖ > c
//   Adam               on θ (f32) with f32 moments
//   copy back          h ← half(θ), in place, so every holder of the model's Variables sees the new values
//
// With Precision::fp32 the masters *are* the model's parameters and the scale is 1: no copies, no
// conversion, no unscaling — exactly the plain Adam step, except that a step with non-finite gradients is
// skipped (and counted) instead of writing nan into the weights.
//
// That is also the optimizer of Precision::bf16 on the CPU, where every tensor stays f32 and only the
// operands of the matrix products are rounded to bf16 (ops/cpu/matmul_precision.h, cpu_matmul_precision).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "core/device.h"
#include "ops/cpu/matmul_precision.h"
#include "train/adam.h"
#include "train/loss_scaler.h"

namespace agf::train {

enum class Precision { fp32, fp16, bf16 };

// "fp32", "fp16", "bf16" (the --precision values); anything else is an error naming the flag.
Precision parse_precision(std::string_view name);
std::string_view precision_name(Precision precision);

// The dtype in which reductions, softmax and losses are carried out for data of `dtype`: f32 for the half
// types, the dtype itself otherwise (f32, f64).
DType accumulation_dtype(DType dtype);

struct MixedPrecisionOptions {
  DType compute_dtype = DType::f32;   // the model's parameters (what the forward uses)
  bool master_copies = false;         // f32 masters apart from the compute copies (required unless compute is f32)
  bool dynamic_loss_scaling = false;  // else the scaler is disabled (scale 1, non-finite steps still skipped)
  LossScalerOptions scaler;
  AdamOptions adam;
};

// The optimizer of a run at `precision` on `device`. fp32: f32, no masters, no scaling. On a GPU, fp16: f16
// copies, f32 masters, dynamic scaling; bf16: bf16 copies, f32 masters, no scaling (bf16 has f32's exponent
// range, so gradients neither underflow nor overflow). bf16 on the CPU: as fp32 (the model stays f32).
MixedPrecisionOptions mixed_precision_options(Precision precision, const Device& device);

// Fails when `device` cannot compute at `precision`, in one line that starts with `command` ("train") and
// says what to use instead: fp16 on the CPU; bf16 on a CPU without bf16 arithmetic (AVX512-BF16,
// ops/cpu/gemm_bf16.h). A device that is not usable at all is check_device_usable's (train/device_flag.h).
void check_precision_usable(Precision precision, const Device& device, std::string_view command);

// The precision of f32 matrix products for a run at `precision` on `device`: bf16 for bf16 on the CPU, f32
// otherwise (a GPU run's half-precision products come from its half-precision tensors). Set it for the run
// with ops::cpu::ScopedMatmulPrecision.
ops::cpu::MatmulPrecision cpu_matmul_precision(Precision precision, const Device& device);

struct UpdateOutcome {
  double loss_scale = 1;  // the scale the gradients of this step were computed with
  double grad_norm = 0;   // ‖g‖₂ of the unscaled gradients before clipping (inf or nan when skipped)
  bool applied = true;    // false: non-finite gradients, the weights were left unchanged
};

class MixedPrecisionOptimizer {
 public:
  // `parameters`: the model's named parameters, holding the f32 values training starts from. With master
  // copies they are cloned into f32 masters (on the same device) and each parameter's data is then
  // replaced by its compute-dtype copy; the Variables themselves remain the model's.
  MixedPrecisionOptimizer(std::vector<std::pair<std::string, Variable>> parameters,
                          const MixedPrecisionOptions& options);

  // Multiply the loss by this before backward().
  double loss_scale() const { return scaler_.scale(); }

  // After backward(): unscale, check, clip (clip_norm <= 0: no clipping), Adam with learning rate `lr`,
  // copy back — or skip on non-finite gradients. Every gradient is cleared afterwards either way.
  UpdateOutcome step(double lr, double clip_norm);
  void zero_grad();

  // Restores what a checkpoint holds besides the weights: Adam's moments (named as Adam::state() names
  // them), the scaler's state, and the number of steps taken — of which the scaler's skipped_steps never
  // reached Adam, whose bias correction counts its own updates. Call after construction; the masters
  // were made from the checkpoint's weights.
  void load_state(const std::vector<std::pair<std::string, Tensor>>& moments, int64_t steps_taken,
                  const LossScalerState& scaler);

  // The f32 weights under their checkpoint names (the model's own parameters when there are no masters).
  const std::vector<std::pair<std::string, Variable>>& master_parameters() const { return masters_; }
  bool has_master_copies() const { return master_copies_; }
  Adam& adam() { return adam_; }
  const Adam& adam() const { return adam_; }
  LossScaler& scaler() { return scaler_; }
  const LossScaler& scaler() const { return scaler_; }

 private:
  std::vector<std::pair<std::string, Variable>> parameters_;  // the model's: compute copies
  std::vector<std::pair<std::string, Variable>> masters_;     // f32; the same Variables without master copies
  bool master_copies_;
  Adam adam_;
  LossScaler scaler_;
};

}  // namespace agf::train
