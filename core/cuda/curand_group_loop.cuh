#pragma once
// The loop of the GPU kernels that draw consecutive words of agf's Philox stream through cuRAND (dropout, the
// random fills): elements go in groups of four, 4g … 4g+3 (one Philox block, one curand4), and a thread takes
// runs of kCurandGroupsPerRun consecutive groups with one cuRAND state (CurandPhiloxGroups,
// core/cuda/curand_philox.h), so that curand_init's cost (two blocks) is paid once per run. For .cu files.
#include <cstdint>

#include "core/cuda/curand_philox.h"

namespace agf::cuda {

inline constexpr int64_t kCurandGroupsPerRun = 4;  // 16 elements per cuRAND state

// The runs that cover `count` elements: one per thread of the grid, or fewer threads striding.
__host__ __device__ inline int64_t curand_group_runs(int64_t count) {
  return ((count + 3) / 4 + kCurandGroupsPerRun - 1) / kCurandGroupsPerRun;
}

// Grid-stride over the runs: visit(group, words) for each group g < ⌈count/4⌉ of this thread's runs, in order,
// with words = the Philox words of elements 4g … 4g+3 (the last group's lanes past `count` included: the
// visitor stops at count).
template <class Visit>
__device__ void for_each_curand_group(uint64_t seed, uint64_t offset, int64_t count, Visit&& visit) {
  const int64_t groups = (count + 3) / 4;
  const int64_t runs = curand_group_runs(count);
  for (int64_t run = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; run < runs;
       run += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t first_group = run * kCurandGroupsPerRun;
    CurandPhiloxGroups bits(seed, offset, static_cast<uint64_t>(first_group));
    for (int64_t group = first_group; group < first_group + kCurandGroupsPerRun && group < groups; ++group) {
      visit(group, bits.next());
    }
  }
}

}  // namespace agf::cuda
