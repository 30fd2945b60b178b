#pragma once
// The q-quantile of sorted values, linear between order statistics (the position q·(n-1)): what the
// bootstrap intervals of train/curve_fit.h and train/paired_bootstrap.h read off their resamples.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/error.h"

namespace agf::train {

inline double percentile(const std::vector<double>& sorted, double q) {
  AGF_CHECK(!sorted.empty() && q >= 0 && q <= 1, "percentile: needs values and q in [0, 1], got {} values, q {}",
            sorted.size(), q);
  const double position = q * static_cast<double>(sorted.size() - 1);
  const std::size_t below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace agf::train
