// Fiber switches (see fiber_context.h).
#include "tests/cuda_emulator/fiber_context.h"

#include <cstdint>

#if defined(__x86_64__)
// agf_emulator_switch_stack(void** save, void* load): push the callee-saved registers, store the stack
// pointer in *save, load `load` as the stack pointer, pop that fiber's registers and return into it.
asm(R"(
    .text
    .globl agf_emulator_switch_stack
    .type agf_emulator_switch_stack, @function
agf_emulator_switch_stack:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size agf_emulator_switch_stack, .-agf_emulator_switch_stack
)");
extern "C" void agf_emulator_switch_stack(void** save, void* load);
#endif

namespace agf::emulator {

#if defined(__x86_64__)
void prepare_fiber(FiberContext& context, unsigned char* stack, std::size_t bytes, void (*entry)()) {
  // The first switch pops six zero registers and returns into `entry` with the stack as a call leaves
  // it: the return-address slot 16-byte aligned, so %rsp ≡ 8 (mod 16) on entry, as the ABI requires.
  const auto top = (reinterpret_cast<std::uintptr_t>(stack + bytes)) & ~std::uintptr_t{15};
  void** slots = reinterpret_cast<void**>(top);
  slots[-1] = nullptr;                               // entry's own return address: it never returns
  slots[-2] = reinterpret_cast<void*>(entry);        // where the switch's `ret` lands
  for (int r = 3; r <= 8; ++r) slots[-r] = nullptr;  // %rbp %rbx %r12 %r13 %r14 %r15
  context.stack_pointer = &slots[-8];
}

void switch_fiber(FiberContext& from, FiberContext& to) {
  agf_emulator_switch_stack(&from.stack_pointer, to.stack_pointer);
}
#else
void prepare_fiber(FiberContext& context, unsigned char* stack, std::size_t bytes, void (*entry)()) {
  getcontext(&context.context);
  context.context.uc_stack.ss_sp = stack;
  context.context.uc_stack.ss_size = bytes;
  context.context.uc_link = nullptr;
  makecontext(&context.context, entry, 0);
}

void switch_fiber(FiberContext& from, FiberContext& to) { swapcontext(&from.context, &to.context); }
#endif

}  // namespace agf::emulator
