#pragma once
// The mean and sample standard deviation of a few numbers: a row's metric over its seeds, a claim's
// differences over seeds. One home for both, so every table and test reads the same spread.
//   mean = Σ x_i / n,   standard_deviation = √( Σ (x_i - mean)² / (n - 1) )   (0 when n < 2)
#include <vector>

namespace agf::train {

struct SampleSummary {
  double mean = 0;
  double standard_deviation = 0;  // the sample (n - 1) one; 0 for a single value
};

// Needs at least one value.
SampleSummary summarize(const std::vector<double>& values);

}  // namespace agf::train
