#pragma once
// Timing helper shared by the `agf bench` subcommands.
#include <algorithm>
#include <chrono>

namespace agf::cli {

// Best-of-`repeats` wall time of `body` in seconds, after one warm-up call.
template <class Body>
double best_seconds(int repeats, Body&& body) {
  body();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace agf::cli
