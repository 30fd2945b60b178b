#pragma once
// World::sum of a buffer in GPU memory with NCCL (docs/distributed.md): ncclAllReduce on the device's agf
// stream, so it is ordered after the backward kernels that wrote the gradients and before the optimizer's,
// without a host wait. One NCCL communicator per process, made on the first call: rank 0's ncclUniqueId is
// broadcast over MPI, then every process joins with its rank. Only in builds with CUDA, MPI and NCCL.
#include "core/tensor.h"
#include "train/distributed.h"

namespace agf::train {

void nccl_sum(Tensor& buffer, World& world);

}  // namespace agf::train
