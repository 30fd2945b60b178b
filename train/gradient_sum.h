#pragma once
// The gradients of a data-parallel step summed over the world (docs/distributed.md): after each process's
// backward, every parameter's .grad() becomes the sum of all processes' gradients of it.
//
// Not one collective per parameter (a model has hundreds, each call paying the latency): the gradients are
// copied into flat buckets of consecutive parameters, at most `bucket_bytes` each (a larger parameter has a
// bucket of its own), every bucket is summed in one call, and each gradient becomes a view of its part of
// the summed bucket (no copy back). A bucket also carries one number per parameter, 1 where this process
// has a gradient for it, so that a gradient nobody computed stays undefined (Adam then leaves the parameter
// and its moments alone, as a single process would) while one that only some computed (a process with an
// empty shard) is summed with zeros.
//
// A world of one: nothing is done, not even a copy.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "train/distributed.h"

namespace agf::train {

struct GradientSumTiming {
  double seconds = 0;                // the whole call: copies into the buckets and the sums
  double communication_seconds = 0;  // inside World::sum (MPI_Allreduce or NCCL)
  int64_t buckets = 0;
  int64_t bytes = 0;  // summed per process
};

constexpr int64_t kDefaultBucketBytes = int64_t{32} << 20;

GradientSumTiming sum_gradients(World& world, const std::vector<std::pair<std::string, Variable>>& parameters,
                                int64_t bucket_bytes = kDefaultBucketBytes);

}  // namespace agf::train
