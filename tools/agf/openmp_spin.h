#pragma once
// The `agf` program's OpenMP spin: short, so that a busy core beside a run slows it gracefully (openmp_spin.cpp).

namespace agf::cli {

inline constexpr const char* kShortOpenmpSpin = "3000";  // GOMP_SPINCOUNT: spins before an idle thread sleeps

// Unless GOMP_SPINCOUNT or OMP_WAIT_POLICY is set: sets GOMP_SPINCOUNT and executes the program again with the
// same arguments (libgomp has read its environment before main). Returns only when nothing was to be done or
// the re-execution failed. Call first thing in main().
void use_short_openmp_spin(char** argv);

}  // namespace agf::cli
