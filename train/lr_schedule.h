#pragma once
// The learning rate at each update (1-based `step`), both schedules with a linear warmup to the peak:
//
//   inverse-sqrt (SPEC §6, the default)   lr = peak · min(step/warmup, sqrt(warmup/step))
//   linear                                lr = peak · step/warmup                        for step ≤ warmup,
//                                              peak · (max_steps − step)/(max_steps − warmup)   after it
//
// The linear schedule reaches 0 at max_steps (so the last update changes nothing), and a run settles by its
// budget: inverse-sqrt keeps a lr of peak·sqrt(warmup/step), under which a small model's validation loss still
// creeps down thousands of updates later (docs/results-converged.md). It needs max_steps > warmup.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace agf::train {

enum class LrSchedule { inverse_sqrt, linear };

inline constexpr LrSchedule kLrSchedules[] = {LrSchedule::inverse_sqrt, LrSchedule::linear};

// "inverse-sqrt" or "linear": the schedule's value of `--lr-schedule`; both; and back (an error naming the two
// for any other name).
std::string_view lr_schedule_name(LrSchedule schedule);
std::vector<std::string> lr_schedule_names();
LrSchedule parse_lr_schedule(const std::string& name);

// Whether `schedule` can run `max_steps` updates after `warmup`: "" if so, else why not (for the flags' errors,
// before any data is read).
std::string lr_schedule_problem(LrSchedule schedule, int64_t warmup, int64_t max_steps);

double inverse_sqrt_lr(double peak, int64_t step, int64_t warmup);
double scheduled_lr(LrSchedule schedule, double peak, int64_t step, int64_t warmup, int64_t max_steps);

}  // namespace agf::train
