#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/enum_flags.h"
#include "core/error.h"

namespace agf::train {

std::string_view lr_schedule_name(LrSchedule schedule) {
  return schedule == LrSchedule::linear ? "linear" : "inverse-sqrt";
}

std::vector<std::string> lr_schedule_names() { return enum_flags(kLrSchedules, lr_schedule_name); }

LrSchedule parse_lr_schedule(const std::string& name) {
  const std::optional<LrSchedule> schedule = parse_enum_flag(kLrSchedules, lr_schedule_name, name);
  AGF_CHECK(schedule.has_value(), "unknown learning-rate schedule '{}' (expected {})", name,
            fmt::join(lr_schedule_names(), " or "));
  return *schedule;
}

double inverse_sqrt_lr(double peak, int64_t step, int64_t warmup) {
  AGF_CHECK(warmup > 0, "learning-rate schedule: warmup must be positive, got {}", warmup);
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double w = static_cast<double>(warmup);
  return peak * std::min(s / w, std::sqrt(w / s));
}

std::string lr_schedule_problem(LrSchedule schedule, int64_t warmup, int64_t max_steps) {
  if (schedule == LrSchedule::linear && !(warmup > 0 && max_steps > warmup)) {
    return fmt::format("the linear schedule needs --warmup ({}) below --max-steps ({})", warmup, max_steps);
  }
  return "";
}

double scheduled_lr(LrSchedule schedule, double peak, int64_t step, int64_t warmup, int64_t max_steps) {
  if (schedule == LrSchedule::inverse_sqrt) return inverse_sqrt_lr(peak, step, warmup);
  const std::string problem = lr_schedule_problem(schedule, warmup, max_steps);
  AGF_CHECK(problem.empty(), "learning-rate schedule: {}", problem);
  const int64_t s = std::clamp<int64_t>(step, 1, max_steps);
  if (s <= warmup) return peak * static_cast<double>(s) / static_cast<double>(warmup);
  return peak * static_cast<double>(max_steps - s) / static_cast<double>(max_steps - warmup);
}

}  // namespace agf::train
