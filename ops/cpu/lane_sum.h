#pragma once
// Σ term(i) for i in [0, n), in f64, as kSumLanes interleaved partial sums (lane l adds the terms i ≡ l mod
// kSumLanes, in order) that are added pairwise at the end. One running sum is a chain of dependent adds, each
// waiting for the last (about 4 cycles apiece); the lanes are independent, so the compiler keeps them in vector
// registers. The order is fixed by n alone: the same bits on every call, for any number of threads.
#include <cstdint>

namespace agf::ops::cpu {

inline constexpr int kSumLanes = 8;

template <class Term>
double lane_sum(int64_t n, Term term) {
  double lanes[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int l = 0; l < kSumLanes; ++l) lanes[l] += term(i + l);
  }
  for (int l = 0; i < n; ++i, ++l) lanes[l] += term(i);
  return ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
}

}  // namespace agf::ops::cpu
