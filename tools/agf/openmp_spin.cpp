// How long agf's idle OpenMP threads spin before they sleep: GOMP_SPINCOUNT=3000 (some tens of microseconds)
// unless the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY.
//
// libgomp's default is 300,000 spins (about 3 ms) at every barrier and at the end of every parallel region. On a
// quiet machine that saves a wake-up; but when another process holds one of the cores, the thread that finished
// its share keeps spinning on a core while the thread it waits for shares the other core with the intruder, and
// every static split (the GEMM, agf's loops) waits for that slow thread. Too short a spin costs the quiet
// machine instead: a thread that sleeps between two parallel regions must be woken for the next, a system call
// and, in a virtual machine, an interrupt between processors. tools/bench/contention.sh, cpu-small
// sinusoidal, 2 threads, target tokens/s quiet → with a busy loop beside it (medians of 2–3 rounds;
// docs/cpu-speed.md, "Contention"):
//   2-core Zen 3, f32:
//     libgomp's default      2,031 →   757  (37 %)
//     GOMP_SPINCOUNT=1000    1,931 → 1,123  (58 %); the quiet figures differ by less than their ranges
//     OMP_WAIT_POLICY=passive                     about 5 % slower when quiet (a throwaway run)
//   2-core Sapphire Rapids (KVM), bf16 (AMX), where a step's 900 sleeps and wake-ups cost most:
//     GOMP_SPINCOUNT=1000    5,812 → 3,323  (57 %)
//     GOMP_SPINCOUNT=3000    6,163 → 3,004  (49 %)
//     GOMP_SPINCOUNT=5000    6,348 → 2,894  (46 %)
//     GOMP_SPINCOUNT=10000   6,543 → 2,402  (37 %)
// 3000 buys about half the quiet gain of 10000 there and keeps the busy step near half the quiet one.
//
// libgomp reads its environment once, in a shared-library constructor that runs before main(); a setenv() from
// the executable's preinit array is lost too, as the C library resets its environment after that. So when the
// default is needed, main() sets it and executes the program again, once: /proc/self/exe with the same
// arguments. Where that fails the program runs on with libgomp's default. (Under valgrind, which does not
// follow an exec unless told --trace-children=yes, set GOMP_SPINCOUNT yourself to keep the run in the tool.)
#include "tools/agf/openmp_spin.h"

#include <unistd.h>

#include <cstdlib>

namespace agf::cli {

void use_short_openmp_spin(char** argv) {
  // Only libgomp reads GOMP_SPINCOUNT: a build on another OpenMP runtime (clang's libomp, as in the sanitizer
  // build of tools/test.sh) runs with that runtime's own waits, and is not started twice for nothing.
  if (!AGF_OPENMP_LIBGOMP) return;
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  setenv("GOMP_SPINCOUNT", kShortOpenmpSpin, /*overwrite=*/0);
  execv("/proc/self/exe", argv);  // returns only when it failed
}

}  // namespace agf::cli
