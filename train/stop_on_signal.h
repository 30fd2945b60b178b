#pragma once
// SIGINT, SIGTERM and SIGUSR1 ask a training run to stop while a StopOnSignal lives: the run finishes its step,
// writes a checkpoint and returns (nothing is lost). SIGUSR1 too, because mpirun forwards it to every process of
// a distributed run while its own SIGINT/SIGTERM kill them within a second or two (docs/distributed.md). The
// previous handlers come back when it goes.
//
// The handler runs on an alternate signal stack of its own (sigaltstack, SA_ONSTACK), never below the
// interrupted stack pointer. oneDNN's JIT f32 GEMM kernels (the 2.x Debian ships; fixed upstream by oneDNN
// pull request 4855) point the stack pointer into a heap buffer while they run, and Linux writes a signal's
// frame (registers and the whole XSAVE area, several KiB) just below it: on the ordinary stack, a SIGTERM
// during a matrix product overwrote the heap, and about one stop in ten ended in glibc's "corrupted size vs.
// prev_size". The alternate stack is the calling thread's; Linux hands a signal sent to the process to its
// main thread unless that thread blocks it, so train() is to be called from the thread that owns the signals
// (the main thread, as `agf` does).
#include <csignal>
#include <memory>

namespace agf::train {

class StopOnSignal {
 public:
  StopOnSignal();  // clears an earlier request
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  // The signal that asked to stop, or 0.
  int requested() const;

 private:
  std::unique_ptr<char[]> stack_;
  stack_t previous_stack_{};
  struct sigaction previous_int_ = {};
  struct sigaction previous_term_ = {};
  struct sigaction previous_usr1_ = {};
};

}  // namespace agf::train
