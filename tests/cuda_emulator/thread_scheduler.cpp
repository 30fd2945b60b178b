// Fibers for the threads of a block, and the barriers between them (see thread_scheduler.h).
#include "tests/cuda_emulator/thread_scheduler.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/cuda_emulator/fiber_context.h"

namespace agf::emulator {
namespace {

constexpr std::size_t kStackBytes = std::size_t{256} << 10;  // per CUDA thread; pages are committed only when touched
constexpr std::size_t kGuardBytes = 4096;
constexpr int kWarpSize = 32;

enum class State { ready, at_block_barrier, at_warp_barrier, returned };

struct Fiber {
  FiberContext context;
  uint3 index{};
  State state = State::ready;
  // The shuffle it waits in (State::at_warp_barrier): its mask, and where the value read from lane
  // `source_lane` goes when the shuffle completes.
  unsigned warp_mask = 0;
  int source_lane = 0;
  void* result = nullptr;
  std::size_t result_bytes = 0;
};

// Fiber stacks, mapped once and reused by every block; a PROT_NONE page below each one turns a thread
// that overflows its stack into a fault instead of a corrupted neighbour.
class StackPool {
 public:
  unsigned char* stack(std::size_t i) {
    while (stacks_.size() <= i) {
      void* mapping = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
      if (mapping == MAP_FAILED) {
        std::perror("agf CUDA emulator: mapping a fiber stack");
        std::abort();
      }
      mprotect(mapping, kGuardBytes, PROT_NONE);
      stacks_.push_back(static_cast<unsigned char*>(mapping) + kGuardBytes);
    }
    return stacks_[i];
  }

 private:
  std::vector<unsigned char*> stacks_;
};

// The block being run: launches are serialised by the runtime, so one at a time.
struct BlockRun {
  LaunchShape shape;
  const std::function<void()>* body = nullptr;
  uint3 block{};
  std::vector<Fiber> fibers;
  std::vector<unsigned char> shared_memory;              // the launch's dynamic shared memory
  std::vector<std::array<unsigned char, 16>> published;  // one warp-exchange slot per thread
  FiberContext scheduler;
  int current = -1;
  std::string failure;
};

BlockRun* g_run = nullptr;
StackPool g_stacks;

Fiber& current_fiber() {
  if (g_run == nullptr || g_run->current < 0) {
    std::fputs("agf CUDA emulator: a CUDA built-in (threadIdx, __syncthreads, ...) used outside a kernel\n", stderr);
    std::abort();
  }
  return g_run->fibers[static_cast<std::size_t>(g_run->current)];
}

void yield_to_scheduler(State state) {
  Fiber& fiber = current_fiber();
  fiber.state = state;
  switch_fiber(fiber.context, g_run->scheduler);
}

[[noreturn]] void fiber_main() {
  (*g_run->body)();
  yield_to_scheduler(State::returned);
  std::abort();  // a returned fiber is never resumed
}

std::string format_index(const uint3& i) { return fmt::format("({},{},{})", i.x, i.y, i.z); }

// Completes every warp shuffle whose lanes (its mask) have all arrived: gives each lane the value its source
// lane published, then lets them go on. Returns whether any completed. (Delivering here, while every lane
// still waits, is what lets one barrier serve a shuffle: no lane can publish again before all have read.)
bool open_warp_barriers(BlockRun& run) {
  bool opened = false;
  const int threads = static_cast<int>(run.fibers.size());
  for (int i = 0; i < threads; ++i) {
    const Fiber& waiting = run.fibers[static_cast<std::size_t>(i)];
    if (waiting.state != State::at_warp_barrier) continue;
    const int base = i - i % kWarpSize;
    bool complete = true;
    for (int lane = 0; lane < kWarpSize && complete; ++lane) {
      if (!(waiting.warp_mask >> lane & 1u)) continue;
      const Fiber& other = run.fibers[static_cast<std::size_t>(base + lane)];  // mask lanes exist: checked on entry
      complete = other.state == State::at_warp_barrier && other.warp_mask == waiting.warp_mask;
    }
    if (!complete) continue;
    for (int lane = 0; lane < kWarpSize; ++lane) {
      if (!(waiting.warp_mask >> lane & 1u)) continue;
      Fiber& reader = run.fibers[static_cast<std::size_t>(base + lane)];
      std::memcpy(reader.result, run.published[static_cast<std::size_t>(base + reader.source_lane)].data(),
                  reader.result_bytes);
      reader.state = State::ready;
    }
    opened = true;
  }
  return opened;
}

// Why no thread of the block can move although some have not returned.
std::string describe_stall(const BlockRun& run) {
  int at_block = 0, at_warp = 0, returned = 0, first_returned = -1, first_warp = -1;
  for (std::size_t i = 0; i < run.fibers.size(); ++i) {
    switch (run.fibers[i].state) {
      case State::at_block_barrier: ++at_block; break;
      case State::at_warp_barrier:
        if (first_warp < 0) first_warp = static_cast<int>(i);
        ++at_warp;
        break;
      case State::returned:
        if (first_returned < 0) first_returned = static_cast<int>(i);
        ++returned;
        break;
      case State::ready: break;
    }
  }
  const int threads = static_cast<int>(run.fibers.size());
  if (at_warp == 0 && returned > 0)
    return fmt::format("__syncthreads() reached by {} of the block's {} threads; the other {} had returned "
                       "(thread {} first): a barrier in divergent code is undefined behaviour on a GPU",
                       at_block, threads, returned, format_index(run.fibers[first_returned].index));
  return fmt::format("deadlock: {} threads wait in __syncthreads(), {} in a warp shuffle (thread {} with mask "
                     "{:#010x}), {} returned",
                     at_block, at_warp, first_warp < 0 ? "-" : format_index(run.fibers[first_warp].index),
                     first_warp < 0 ? 0u : run.fibers[first_warp].warp_mask, returned);
}

// Runs one block to completion. Returns "" or why it failed.
std::string run_block(BlockRun& run) {
  const dim3 b = run.shape.block;
  for (std::size_t i = 0; i < run.fibers.size(); ++i) {
    Fiber& fiber = run.fibers[i];
    const auto linear = static_cast<unsigned>(i);
    fiber.index = {linear % b.x, linear / b.x % b.y, linear / (b.x * b.y)};
    fiber.state = State::ready;
    prepare_fiber(fiber.context, g_stacks.stack(i), kStackBytes, &fiber_main);
  }
  // Fresh shared memory reads as NaN (all bits set), so a kernel that reads before writing shows it.
  std::memset(run.shared_memory.data(), 0xff, run.shared_memory.size());
  for (;;) {
    for (std::size_t i = 0; i < run.fibers.size(); ++i) {
      if (run.fibers[i].state != State::ready) continue;
      run.current = static_cast<int>(i);
      switch_fiber(run.scheduler, run.fibers[i].context);
      if (!run.failure.empty()) return run.failure;
    }
    run.current = -1;
    // Every thread now waits at a barrier or has returned.
    std::size_t returned = 0, at_block = 0;
    for (const Fiber& fiber : run.fibers) {
      returned += fiber.state == State::returned;
      at_block += fiber.state == State::at_block_barrier;
    }
    if (returned == run.fibers.size()) return "";
    if (open_warp_barriers(run)) continue;
    if (at_block == run.fibers.size()) {
      for (Fiber& fiber : run.fibers) fiber.state = State::ready;
      continue;
    }
    return describe_stall(run);
  }
}

}  // namespace

std::string run_grid(const LaunchShape& shape, const std::function<void()>& thread_body) {
  BlockRun run;
  run.shape = shape;
  run.body = &thread_body;
  const std::size_t threads = std::size_t{shape.block.x} * shape.block.y * shape.block.z;
  run.fibers.resize(threads);
  run.published.resize(threads);
  run.shared_memory.resize(shape.dynamic_shared_bytes);
  g_run = &run;
  std::string failure;
  for (unsigned z = 0; z < shape.grid.z && failure.empty(); ++z)
    for (unsigned y = 0; y < shape.grid.y && failure.empty(); ++y)
      for (unsigned x = 0; x < shape.grid.x && failure.empty(); ++x) {
        run.block = {x, y, z};
        failure = run_block(run);
        if (!failure.empty()) failure = fmt::format("block {}: {}", format_index(run.block), failure);
      }
  g_run = nullptr;
  return failure;
}

const uint3& thread_index() { return current_fiber().index; }
const uint3& block_index() { return current_fiber(), g_run->block; }
const dim3& block_dim() { return current_fiber(), g_run->shape.block; }
const dim3& grid_dim() { return current_fiber(), g_run->shape.grid; }
unsigned char* dynamic_shared_memory() { return current_fiber(), g_run->shared_memory.data(); }
int lane_id() { return g_run->current % kWarpSize; }

void sync_threads() { yield_to_scheduler(State::at_block_barrier); }

void warp_exchange(unsigned mask, const void* value, std::size_t size, int source_lane, void* result) {
  Fiber& fiber = current_fiber();
  if (size > sizeof(g_run->published[0])) fail_launch(fmt::format("a warp shuffle of a {}-byte value", size));
  const int thread = g_run->current, lane = thread % kWarpSize, base = thread - lane;
  const int warp_threads = std::min<int>(kWarpSize, static_cast<int>(g_run->fibers.size()) - base);
  if (!(mask >> lane & 1u))
    fail_launch(
        fmt::format("a warp shuffle with mask {:#010x} called by lane {}, which the mask leaves out", mask, lane));
  if (warp_threads < kWarpSize && (mask >> warp_threads) != 0)
    fail_launch(fmt::format("a warp shuffle with mask {:#010x} in a warp of only {} threads (blockDim {}×{}×{})", mask,
                            warp_threads, g_run->shape.block.x, g_run->shape.block.y, g_run->shape.block.z));
  if (source_lane < 0 || source_lane >= kWarpSize || !(mask >> source_lane & 1u))
    fail_launch(fmt::format("lane {} reads lane {} in a warp shuffle with mask {:#010x}", lane, source_lane, mask));
  std::memcpy(g_run->published[static_cast<std::size_t>(thread)].data(), value, size);
  fiber.warp_mask = mask;
  fiber.source_lane = source_lane;
  fiber.result = result;
  fiber.result_bytes = size;
  yield_to_scheduler(State::at_warp_barrier);  // returns once open_warp_barriers has filled `result`
}

void check_launch_bounds(long long max_threads, long long) {
  const dim3& b = block_dim();
  const long long threads = static_cast<long long>(b.x) * b.y * b.z;
  if (threads > max_threads) {
    fail_launch(fmt::format("a block of {} threads ({}×{}×{}) for a kernel declared __launch_bounds__({})", threads,
                            b.x, b.y, b.z, max_threads));
  }
}

void fail_launch(std::string message) {
  const Fiber& fiber = current_fiber();
  g_run->failure = fmt::format("thread {}: {}", format_index(fiber.index), message);
  yield_to_scheduler(State::returned);
  std::abort();
}

}  // namespace agf::emulator
