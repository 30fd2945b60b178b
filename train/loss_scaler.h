#pragma once
// Dynamic loss scaling for half-precision training, as PyTorch's torch.cuda.amp.GradScaler.
//
// f16 represents magnitudes from 6·10⁻⁸ (subnormal) to 65504, and small gradients underflow to zero in
// the backward pass. Multiplying the loss by a scale S before backward() multiplies every gradient by S
// (the chain rule is linear in the seed), which moves them into f16's range; the optimizer divides S out
// again in f32. S is chosen dynamically:
//
//   a step whose gradients are all finite  →  good_steps += 1; when good_steps reaches growth_interval:
//                                             S ← min(S · growth_factor, max_scale), good_steps ← 0
//   a step with an inf or nan gradient     →  the step is skipped (no optimizer update), skipped_steps += 1,
//                                             S ← max(S · backoff_factor, min_scale), good_steps ← 0
//
// S starts at 2^16. Choices beyond GradScaler, made here: S never falls below min_scale = 1 (a scale
// under 1 would shrink gradients that already overflow without scaling: such steps are skipped at S = 1
// and the overflow lies in the forward pass, which no scale fixes), and never grows above max_scale =
// 2^24 (a model whose gradients are tiny would otherwise double S every growth_interval steps without
// bound; 2^24 already lifts an f32-normal gradient of 2^-126 to 2^-102, and f16's smallest normal is 2^-14).
// All factors are powers of two, so S stays a power of two and dividing it out is exact.
//
// The disabled scaler (bf16, whose exponent range is f32's, and fp32) keeps S = 1 and never grows, but
// still skips and counts steps with non-finite gradients, so one bad batch cannot poison the weights.
#include <cstdint>

namespace agf::train {

struct LossScalerOptions {
  double initial_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;  // consecutive finite steps before the scale grows
  double min_scale = 1.0;
  double max_scale = 16777216.0;  // 2^24
};

// What a checkpoint stores (agf.state.loss_scale, agf.state.loss_scale_good_steps, agf.state.skipped_steps).
struct LossScalerState {
  double scale = 1.0;
  int64_t good_steps = 0;     // consecutive finite steps since the scale last changed
  int64_t skipped_steps = 0;  // steps skipped for non-finite gradients, over the whole run
};

class LossScaler {
 public:
  // Dynamic scaling (fp16).
  explicit LossScaler(LossScalerOptions options);
  // Disabled: scale 1 for ever; non-finite steps are still skipped and counted (bf16, fp32).
  static LossScaler disabled();

  bool enabled() const { return enabled_; }
  double scale() const { return state_.scale; }
  int64_t good_steps() const { return state_.good_steps; }
  int64_t skipped_steps() const { return state_.skipped_steps; }

  // Records the outcome of one step (were all unscaled gradients finite?) and adjusts the scale by the
  // rules above. Returns whether the optimizer update may run (= gradients_finite).
  bool update(bool gradients_finite);

  const LossScalerState& state() const { return state_; }
  // Restores a saved state (a resumed run continues with the same scale and counters).
  void load_state(const LossScalerState& state);

 private:
  LossScaler(LossScalerOptions options, bool enabled);

  LossScalerOptions options_;
  bool enabled_;
  LossScalerState state_;
};

}  // namespace agf::train
