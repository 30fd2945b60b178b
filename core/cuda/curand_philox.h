#pragma once
// agf's Philox stream (core/philox.h) drawn on the GPU through cuRAND's Philox4x32-10 device API
// (curand_kernel.h), bit for bit: element e of agf's stream (seed, offset) is cuRAND's state
// curand_init(seed, 0, 4·offset + e) (core/cuda/curand_philox_mapping.h says why).
//
// What a state costs: curand_init computes two Philox blocks (one when it sets the subsequence, one when it
// skips to the position) and every curand4 computes the next block. A kernel that needs many consecutive
// groups of four words therefore keeps one state for a run of them (CurandPhiloxGroups). A single word would
// pay for the whole initialisation: two or three blocks for one word, which is why attention's dropout, one
// word per (query, key) pair at scattered indices, keeps core/philox.h (docs/cuda.md).
//
// For .cu files only (the CUDA emulator compiles them with the host compiler and cuRAND's real header).
#include <curand_kernel.h>

#include <cstdint>

#include "core/cuda/curand_philox_mapping.h"
#include "core/philox.h"

namespace agf::cuda {

// The four words of consecutive groups first_group, first_group + 1, ... of the stream (seed, offset): the
// words of elements 4g … 4g + 3, lane k equal to Philox4x32::bits(seed, offset, 4g + k).
class CurandPhiloxGroups {
 public:
  __device__ CurandPhiloxGroups(uint64_t seed, uint64_t offset, uint64_t first_group) {
    curand_init(seed, /*subsequence=*/0, curand_philox_position(offset + first_group, 0), &state_);
  }

  // The next group's words (the first call returns first_group's).
  __device__ Philox4x32::Block next() {
    const uint4 words = curand4(&state_);
    return {words.x, words.y, words.z, words.w};
  }

 private:
  curandStatePhilox4_32_10_t state_;
};

}  // namespace agf::cuda
