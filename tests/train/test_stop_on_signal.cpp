// StopOnSignal (train/stop_on_signal.h): a stop signal is recorded, the previous handler comes back, and the
// handler's frame goes to a stack of its own even when the interrupted code had pointed the stack pointer into
// the heap, as oneDNN's JIT GEMM kernels do (without the alternate stack, this test sees the frame land in its
// heap buffer).
#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <vector>

#include "tests/skip.h"
#include "train/stop_on_signal.h"

namespace {

std::atomic<int> previous_handler_calls{0};
extern "C" void count_previous(int) { ++previous_handler_calls; }

}  // namespace

TEST_CASE("a stop signal is recorded while StopOnSignal lives, and the previous handler returns after",
          "[train][signal]") {
  auto* const before = std::signal(SIGUSR1, count_previous);
  previous_handler_calls = 0;
  {
    agf::train::StopOnSignal stop;
    CHECK(stop.requested() == 0);
    std::raise(SIGUSR1);
    CHECK(stop.requested() == SIGUSR1);
    CHECK(previous_handler_calls == 0);
  }
  std::raise(SIGUSR1);
  CHECK(previous_handler_calls == 1);
  agf::train::StopOnSignal again;  // a new one starts with no request
  CHECK(again.requested() == 0);
  std::signal(SIGUSR1, before);
}

TEST_CASE("a stop signal's frame goes to its own stack, not below a stack pointer that points into the heap",
          "[train][signal]") {
#if defined(__x86_64__) && defined(__linux__)
  // What a JIT GEMM kernel does: the stack pointer at the top of a heap buffer. A signal arriving then, with the
  // handler on the ordinary stack, has Linux write its frame (several KiB) into the buffer just below.
  constexpr std::size_t bytes = 64 * 1024;
  constexpr unsigned char pattern = 0xA5;
  std::vector<unsigned char> heap(bytes, pattern);
  const uintptr_t top = (reinterpret_cast<uintptr_t>(heap.data()) + bytes) & ~uintptr_t{63};
  agf::train::StopOnSignal stop;
  long result = SYS_kill;
  const long pid = ::getpid();
  // kill(getpid(), SIGTERM) by the syscall instruction, with rsp moved into the buffer around it: the signal is
  // delivered as the syscall returns to user space, while rsp still points there.
  asm volatile("mov %%rsp, %%r12\n\t"
               "mov %[top], %%rsp\n\t"
               "syscall\n\t"
               "mov %%r12, %%rsp\n\t"
               : "+a"(result)
               : [top] "r"(top), "D"(pid), "S"(static_cast<long>(SIGTERM))
               : "rcx", "r11", "r12", "memory");
  REQUIRE(result == 0);
  CHECK(stop.requested() == SIGTERM);
  const auto overwritten = std::count_if(heap.begin(), heap.end(), [](unsigned char b) { return b != pattern; });
  CHECK(overwritten == 0);
#else
  AGF_SKIP("needs x86-64 Linux to point the stack pointer into the heap");
#endif
}
