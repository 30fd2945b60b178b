#include "train/sample_summary.h"

#include <cmath>

#include "core/error.h"

namespace agf::train {

SampleSummary summarize(const std::vector<double>& values) {
  AGF_CHECK(!values.empty(), "summarize: needs at least one value");
  const double n = static_cast<double>(values.size());
  SampleSummary result;
  for (double x : values) result.mean += x;
  result.mean /= n;
  if (values.size() > 1) {
    double squares = 0;
    for (double x : values) squares += (x - result.mean) * (x - result.mean);
    result.standard_deviation = std::sqrt(squares / (n - 1));
  }
  return result;
}

}  // namespace agf::train
