#include "train/loss_scaler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace agf::train {

LossScaler::LossScaler(LossScalerOptions options) : LossScaler(options, true) {}

LossScaler::LossScaler(LossScalerOptions options, bool enabled) : options_(options), enabled_(enabled) {
  AGF_CHECK(options.min_scale > 0 && options.min_scale <= options.initial_scale &&
                options.initial_scale <= options.max_scale,
            "LossScaler: need 0 < min_scale ≤ initial_scale ≤ max_scale, got {} ≤ {} ≤ {}", options.min_scale,
            options.initial_scale, options.max_scale);
  AGF_CHECK(options.growth_factor > 1 && options.backoff_factor > 0 && options.backoff_factor < 1,
            "LossScaler: need growth_factor > 1 and 0 < backoff_factor < 1, got {} and {}", options.growth_factor,
            options.backoff_factor);
  AGF_CHECK(options.growth_interval >= 1, "LossScaler: growth_interval must be at least 1, got {}",
            options.growth_interval);
  state_.scale = enabled ? options.initial_scale : 1.0;
}

LossScaler LossScaler::disabled() {
  return LossScaler({.initial_scale = 1.0, .min_scale = 1.0, .max_scale = 1.0}, false);
}

bool LossScaler::update(bool gradients_finite) {
  if (!gradients_finite) {
    ++state_.skipped_steps;
    state_.good_steps = 0;
    if (enabled_) state_.scale = std::max(state_.scale * options_.backoff_factor, options_.min_scale);
    return false;
  }
  if (!enabled_) return true;
  if (++state_.good_steps >= options_.growth_interval) {
    state_.scale = std::min(state_.scale * options_.growth_factor, options_.max_scale);
    state_.good_steps = 0;
  }
  return true;
}

void LossScaler::load_state(const LossScalerState& state) {
  AGF_CHECK(std::isfinite(state.scale) && state.scale > 0,
            "LossScaler: a saved scale must be positive and finite, got {}", state.scale);
  AGF_CHECK(state.good_steps >= 0 && state.skipped_steps >= 0,
            "LossScaler: negative saved counters ({} good, {} skipped)", state.good_steps, state.skipped_steps);
  state_ = state;
  if (!enabled_) {
    state_.scale = 1.0;
    state_.good_steps = 0;
  }
}

}  // namespace agf::train
