#pragma once
// `--lr-schedule`, shared by `agf train` and `agf experiment paper`: the option, and the schedule it names
// checked against the run's warmup and length before any data is read (a flag error, exit 2).
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "train/lr_schedule.h"

namespace agf::cli {

struct LrScheduleFlag {
  std::string name = "inverse-sqrt";

  void add_to(CLI::App& command) {
    command
        .add_option("--lr-schedule", name, "After the warmup: inverse-sqrt (SPEC), or linear down to 0 at --max-steps")
        ->capture_default_str()
        ->check(CLI::IsMember(train::lr_schedule_names()));
  }

  train::LrSchedule resolve(int64_t warmup, int64_t max_steps) const {
    const train::LrSchedule schedule = train::parse_lr_schedule(name);
    const std::string problem = train::lr_schedule_problem(schedule, warmup, max_steps);
    if (!problem.empty()) throw CLI::ValidationError("--lr-schedule", problem);
    return schedule;
  }
};

}  // namespace agf::cli
