// The range check of core/cuda/curand_philox_mapping.h, here because .cu files cannot include core/error.h.
#include "core/cuda/curand_philox_mapping.h"

#include "core/error.h"

namespace agf::cuda {

void require_curand_philox_range(const char* op, uint64_t offset, uint64_t count) {
  AGF_CHECK(curand_philox_range_fits(offset, count),
            "{}: {} random elements at Philox offset {} lie beyond cuRAND's 64-bit position "
            "(4·offset + element must stay below 2^64, so offsets below 2^62)",
            op, count, offset);
}

}  // namespace agf::cuda
