#pragma once
// Minimises a function of one variable on [low, high]: a uniform grid of `grid` points first (so a residual
// with several dips is not caught in the wrong one), then golden-section search in the bracket between the
// best grid point's neighbours (two grid steps wide), down to 0.618^iterations of that: 60 iterations leave
// 3·10⁻¹³ of it, about double precision.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace agf::train {

template <typename Function>
double minimize_scalar(Function&& f, double low, double high, int grid = 400, int iterations = 60) {
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
  // Golden section on [a, b] with inner points c < d; each iteration keeps one of them and evaluates one new.
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double a = low + step * std::max(best - 1, 0), b = low + step * std::min(best + 1, grid - 1);
  double c = b - ratio * (b - a), d = a + ratio * (b - a), fc = f(c), fd = f(d);
  for (int iteration = 0; iteration < iterations; ++iteration) {
    if (fc < fd) {
      b = d, d = c, fd = fc;
      c = b - ratio * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + ratio * (b - a), fd = f(d);
    }
  }
  return (a + b) / 2;
}

}  // namespace agf::train
