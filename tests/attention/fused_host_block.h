#pragma once
// The fused attention kernels' block algorithms (ops/attention_fused.h) run on the CPU, for the tests: each
// phase a loop over the 256 threads of a block, each thread with its own State ("registers"), blocks one
// after another. Only the executor differs from the GPU's (ops/cuda/attention_fused_kernels.cu): barriers
// are no-ops here, since a phase runs to completion before the next starts.
#include <limits>
#include <vector>

#include "ops/attention_fused.h"

namespace agf::ops::fused {

// Runs a block algorithm's phases on the CPU: each phase is a loop over the 256 threads, each thread with its
// own State ("registers"). A reduction across a row's columns combines the 16 threads of a half-warp (same
// ty), as the GPU's xor-shuffles do, and hands every one of them the result.
template <class State>
class HostBlock {
 public:
  template <class Body>
  void for_threads(Body&& body) {
    for (int tid = 0; tid < kThreads; ++tid) body(tid, states_[static_cast<std::size_t>(tid)]);
  }
  void sync() {}
  template <class Op>
  void reduce_part(Op op) {
    for (int group = 0; group < kThreads / kSide; ++group) {
      State* first = &states_[static_cast<std::size_t>(group * kSide)];
      for (int i = 0; i < State::kParts; ++i) {
        auto value = first[0].part[i];
        for (int lane = 1; lane < kSide; ++lane) value = op(value, first[lane].part[i]);
        for (int lane = 0; lane < kSide; ++lane) first[lane].part[i] = value;
      }
    }
  }
  template <class Acc>
  void add_shared(Acc* target, Acc value) {
    *target += value;
  }
  template <class Acc>
  void add_global(Acc* target, Acc value) {
    *target += value;
  }

 private:
  std::vector<State> states_ = std::vector<State>(kThreads);
};

// Shared memory of an emulated block, filled with NaN before each block so that a read of an element no
// phase wrote shows up in the result.
template <class Acc>
std::vector<Acc>& poisoned_shared(std::vector<Acc>& shared, int elements) {
  shared.assign(static_cast<std::size_t>(elements), std::numeric_limits<Acc>::quiet_NaN());
  return shared;
}

// The three kernels of a call, one block after another. A.delta must hold Δ before the backward passes
// (host_row_deltas computes it as the GPU's preprocessing kernel does).
template <class Io, int kHeadDim>
void host_forward(const FusedAttention<typename Io::Storage, typename Io::Acc>& A) {
  using Acc = typename Io::Acc;
  using Shape = Tile<Acc, kHeadDim>;
  HostBlock<ForwardState<Acc, kHeadDim>> ex;
  std::vector<Acc> shared;
  for (int64_t block = 0; block < query_tile_blocks(A.pairs, Shape::kBlock); ++block) {
    forward_block<Io, kHeadDim>(ex, A, block, poisoned_shared(shared, Shape::kForwardShared).data());
  }
}

template <class Io>
void host_row_deltas(const FusedAttention<typename Io::Storage, typename Io::Acc>& A) {
  const PairGeometry& P = A.pairs;
  for (int64_t b = 0; b < P.batch; ++b) {
    for (int64_t h = 0; h < P.heads; ++h) {
      for (int64_t m = 0; m < P.queries; ++m) {
        A.delta[(b * P.heads + h) * P.queries + m] = row_delta<Io>(A.grad.row(b, h, m), A.saved_out.row(b, h, m),
                                                                   P.head_dim);
      }
    }
  }
}

template <class Io, int kHeadDim>
void host_backward(const FusedAttention<typename Io::Storage, typename Io::Acc>& A) {
  using Acc = typename Io::Acc;
  using Shape = Tile<Acc, kHeadDim>;
  std::vector<Acc> shared;
  HostBlock<KeyValueState<Acc, kHeadDim>> key_value;
  for (int64_t block = 0; block < key_tile_blocks(A.pairs, Shape::kBlock); ++block) {
    key_value_block<Io, kHeadDim>(key_value, A, block, poisoned_shared(shared, Shape::kBackwardShared).data());
  }
  HostBlock<QueryState<Acc, kHeadDim>> query;
  for (int64_t block = 0; block < query_tile_blocks(A.pairs, Shape::kBlock); ++block) {
    query_block<Io, kHeadDim>(query, A, block, poisoned_shared(shared, Shape::kBackwardShared).data());
  }
}

}  // namespace agf::ops::fused
