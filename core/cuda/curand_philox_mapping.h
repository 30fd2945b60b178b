#pragma once
// Where agf's Philox stream lies in cuRAND's (docs/cuda.md, "Random numbers through cuRAND").
//
// agf's element e of the stream (seed, offset) is lane e % 4 of the Philox4x32-10 block whose counter is
// (offset + ⌊e/4⌋) in its low 64 bits, with key = seed (core/philox.h). cuRAND's
// curand_init(seed, subsequence, position, &state) sets key = seed, counter words 2 and 3 = subsequence,
// counter words 0 and 1 = ⌊position/4⌋, and makes lane position % 4 the next word (curand_kernel.h:
// curand_init, skipahead, Philox_State_Incr). So agf's element e is cuRAND's (seed, subsequence 0,
// position 4·offset + e) — as long as 4·offset + e does not overflow 64 bits, which the wrappers that
// launch cuRAND kernels check first (require_curand_philox_range).
//
// No cuRAND include here: the g++ wrappers use these too (core/cuda/curand_philox.h has the device side).
#include <cstdint>

#include "core/host_device.h"

namespace agf::cuda {

// cuRAND's position (its curand_init offset, subsequence 0) of agf's element `element` at `offset`.
AGF_HOST_DEVICE constexpr uint64_t curand_philox_position(uint64_t offset, uint64_t element) {
  return 4 * offset + element;
}

// Whether the elements [0, count) of the stream at `offset` all have a cuRAND position below 2^64:
// 4·offset + count - 1 ≤ 2^64 - 1.
AGF_HOST_DEVICE constexpr bool curand_philox_range_fits(uint64_t offset, uint64_t count) {
  if (count == 0) return true;
  constexpr uint64_t kMaxPosition = ~uint64_t{0};
  return offset <= kMaxPosition / 4 && count - 1 <= kMaxPosition - 4 * offset;
}

// Throws agf::Error naming `op` when curand_philox_range_fits(offset, count) is false.
void require_curand_philox_range(const char* op, uint64_t offset, uint64_t count);

}  // namespace agf::cuda
