#pragma once
// Minimises a function of one variable on [low, high]: a uniform grid of `grid` points first (so a residual
// with several dips is not caught in the wrong one), then golden-section search in the bracket between the
// best grid point's neighbours, down to a bracket 0.618^iterations of the grid step wide.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace agf::train {

template <typename Function>
double minimize_scalar(Function&& f, double low, double high, int grid = 400, int iterations = 100) {
  AGF_CHECK(low < high && grid >= 2, "minimize_scalar: needs low < high and at least 2 grid points");
  const double step = (high - low) / (grid - 1);
  int best = 0;
  double best_value = std::numeric_limits<double>::infinity();
  for (int i = 0; i < grid; ++i) {
    const double value = f(low + step * i);
    if (value < best_value) {
      best_value = value;
      best = i;
    }
  }
  double left_end = low + step * std::max(best - 1, 0), right_end = low + step * std::min(best + 1, grid - 1);
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    const double left = right_end - ratio * (right_end - left_end), right = left_end + ratio * (right_end - left_end);
    if (f(left) < f(right)) {
      right_end = right;
    } else {
      left_end = left;
    }
  }
  return (left_end + right_end) / 2;
}

}  // namespace agf::train
