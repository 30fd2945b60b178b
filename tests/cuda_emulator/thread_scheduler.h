#pragma once
// The CUDA emulator's execution model: every thread of a block is a fiber (its own stack, run on one OS
// thread), and a fiber runs until it reaches a barrier — __syncthreads() or a warp shuffle — or returns.
// When every thread of the block waits at a barrier, the barrier opens; when some threads wait and the
// rest returned (or wait elsewhere), that is a divergent barrier, undefined behaviour on a GPU, and the
// launch fails naming it. Blocks run one after the other, so `__shared__` variables can be plain statics.
//
// What this checks: indexing, bounds, barrier placement and warp-shuffle masks, launch configurations
// (block and grid limits, dynamic shared memory), against the CPU reference through the GPU tests.
// What it cannot check: data races (a fiber is never pre-empted between barriers), timing, and anything
// that depends on the hardware's scheduling order. See docs/cuda-emulator.md.
#include <vector_types.h>

#include <cstddef>
#include <functional>
#include <string>

namespace agf::emulator {

struct LaunchShape {
  dim3 grid;
  dim3 block;
  std::size_t dynamic_shared_bytes = 0;
};

// Runs `thread_body` once for every thread of every block of `shape`. Returns "" when every thread
// returned, else why the launch failed (a divergent barrier, a deadlock, a bad shuffle mask).
std::string run_grid(const LaunchShape& shape, const std::function<void()>& thread_body);

// ---- for code running inside a thread of run_grid ----
const uint3& thread_index();
const uint3& block_index();
const dim3& block_dim();
const dim3& grid_dim();
unsigned char* dynamic_shared_memory();

// __syncthreads(): waits until every thread of the block has arrived.
void sync_threads();

// One warp-shuffle step: publishes `size` bytes at `value` for the lanes in `mask`, waits until all of
// them have published, and returns with what lane `source_lane` of this warp published in `result`.
void warp_exchange(unsigned mask, const void* value, std::size_t size, int source_lane, void* result);
// This thread's lane (0..31) within its warp.
int lane_id();

// A kernel's __launch_bounds__(max_threads, ...), which the source rewrite turns into a call at the top of
// its body: fails the launch when the block has more threads than the kernel was compiled for (a GPU
// refuses such a launch: too many resources requested).
void check_launch_bounds(long long max_threads, long long min_blocks_per_multiprocessor = 0);

// Ends the launch with `message` (from inside a thread); never returns.
[[noreturn]] void fail_launch(std::string message);

}  // namespace agf::emulator
