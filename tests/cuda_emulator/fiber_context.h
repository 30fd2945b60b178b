#pragma once
// Switching between the emulator's fibers: a fiber is a stack and the callee-saved registers the
// System V ABI asks a function to preserve, so a switch is an ordinary call that returns on another
// stack. On x86-64 that is a dozen instructions (no system call, unlike swapcontext's signal-mask
// save), which matters when every CUDA thread of every block is a fiber; elsewhere, ucontext.
#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace agf::emulator {

#if defined(__x86_64__)
struct FiberContext {
  void* stack_pointer = nullptr;  // where the switch pushed the registers
};
#else
struct FiberContext {
  ucontext_t context{};
};
#endif

// Makes `context` start `entry` (which must never return) on the given stack at the first switch to it.
void prepare_fiber(FiberContext& context, unsigned char* stack, std::size_t bytes, void (*entry)());
// Saves the running fiber in `from` and resumes `to`; returns when something switches back to `from`.
void switch_fiber(FiberContext& from, FiberContext& to);

}  // namespace agf::emulator
