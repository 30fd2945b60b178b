#include "nn/sinusoidal.h"

#include <cmath>
#include <vector>

namespace agf::nn {

Tensor sinusoidal_positions(int64_t positions, int64_t d_model, DType dtype) {
  AGF_CHECK(positions >= 0 && d_model >= 1, "sinusoidal_positions: need positions >= 0 and d_model >= 1, got {} and {}",
            positions, d_model);
  std::vector<double> table(static_cast<std::size_t>(positions * d_model));
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t feature = 0; feature < d_model; ++feature) {
      const int64_t pair = feature / 2;  // i: features 2i and 2i+1 share a frequency
      const double angle = static_cast<double>(p) /
                           std::pow(10000.0, 2.0 * static_cast<double>(pair) / static_cast<double>(d_model));
      table[p * d_model + feature] = feature % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  return Tensor::from_vector(table, {positions, d_model}, dtype);
}

}  // namespace agf::nn
