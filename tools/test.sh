#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test, in three stages (docs/sanitizers-and-fuzzing.md):
#   1. the suite       CTest over the Catch2 suite in build/ (arguments go to this ctest)
#   2. sanitizers      the suite again, built with ASan + UBSan in build-sanitize/ (CPU only), but for
#                      its two longest runs                                     AGF_SANITIZERS=0 skips it
#   3. fuzzing         each libFuzzer target of tests/fuzz for AGF_FUZZ_SECONDS (30) from its committed
#                      seed corpus, in the same build                          AGF_FUZZ_SECONDS=0 skips it
# Stages 2 and 3 need clang (tools/setup.sh installs it): without it, stage 2 builds with g++ and stage 3 is
# skipped, saying so. Tests that need a GPU, or an optional Python peer, skip with a printed reason when it
# is absent. The script fails when any stage finds anything.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
jobs="${AGF_JOBS:-$(nproc)}"
sanitizers="${AGF_SANITIZERS:-1}"
fuzz_seconds="${AGF_FUZZ_SECONDS:-30}"
sanitize_dir="${AGF_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
failed=()
stage_times=()

section() { printf '\n==== %s ====\n' "$*"; }
# Runs CTest in the current folder with the given arguments; says why each skipped test was skipped (CTest
# lists them, but not their reasons), then repeats CTest's summary line so that it stays the last word.
run_ctest() {
  set +e
  ctest --output-on-failure --timeout 900 -j "$jobs" "$@" | tee ctest-output.txt  # 900 s: a hang fails, soon
  local status=${PIPESTATUS[0]}
  set -e
  if grep -q "^SKIPPED: " Testing/Temporary/LastTest.log 2>/dev/null; then
    echo
    echo "Skipped tests and why:"
    grep "^SKIPPED: " Testing/Temporary/LastTest.log | sort | uniq -c | sed 's/^ */  /'
    grep -E "tests passed, [0-9]+ tests failed out of" ctest-output.txt | tail -n 1
  fi
  return "$status"
}

# ---- 1. the suite ----------------------------------------------------------------------------------------
section "1. the suite (build/)"
# The processor, for reading a log later: kernels (AVX-512, AVX512-BF16, AMX) are chosen by what it has.
echo "machine: $(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores;" \
     "$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -oE 'avx2|avx512f|avx512_bf16|amx_bf16' | sort -u | tr '\n' ' ')"
start=$SECONDS
"$root/tools/build.sh"
(cd "${AGF_BUILD_DIR:-$root/build}" && run_ctest "$@") || failed+=("the suite")
stage_times+=("1. the suite: $((SECONDS - start)) s")

# ---- 2. sanitizers ---------------------------------------------------------------------------------------
# One build serves stages 2 and 3: with clang it is also instrumented for libFuzzer (AGF_FUZZ), and the fuzz
# targets link the same objects. -O1, as ASan advises: fast enough to run, quicker to build than -O3.
have_clang=0
command -v clang++ >/dev/null 2>&1 && have_clang=1
# The GEMM is Eigen's (-DAGF_OPENBLAS=OFF -DAGF_ONEDNN=OFF), instrumented like the rest: clang links LLVM's
# OpenMP runtime (libomp), and OpenBLAS's OpenMP build, made for GCC's libgomp, can wait forever in its thread
# pool under libomp's GOMP_* shims (a threaded sgemm spun in sched_yield until CTest's 1500 s timeout;
# OMP_NUM_THREADS=1 hid it); oneDNN's Debian build is on libgomp too. Release builds with GCC keep both.
sanitize_build() {
  local configure=(-DAGF_CUDA=OFF -DAGF_OPENBLAS=OFF -DAGF_ONEDNN=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
  if [ "$have_clang" = 1 ]; then
    configure+=(-DAGF_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++)
  else
    configure+=(-DAGF_SANITIZE=ON)
  fi
  if [ ! -f "$sanitize_dir/CMakeCache.txt" ]; then
    local generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    cmake -S "$root" -B "$sanitize_dir" "${generator[@]}" "${configure[@]}" >/dev/null
  else
    cmake "$sanitize_dir" "${configure[@]}" >/dev/null  # an older folder gets today's settings
  fi
  cmake --build "$sanitize_dir" -j "$jobs"
}
if [ "$sanitizers" != 0 ] || [ "$fuzz_seconds" != 0 ]; then
  section "2. sanitizers: ASan + UBSan (build-sanitize/)"
  start=$SECONDS
  [ "$have_clang" = 1 ] || echo "note: clang++ not found: the sanitizer build uses g++, and stage 3 (fuzzing) is skipped"
  if ! sanitize_build; then
    failed+=("the sanitizer build")
    sanitizers=0 fuzz_seconds=0
  fi
fi
if [ "$sanitizers" != 0 ]; then
  # Any report fails its test: UBSan aborts (-fno-sanitize-recover), ASan and LeakSanitizer exit non-zero.
  # The whole suite runs, the kill campaign included, but for its two longest runs, 100 s and 120 s of one
  # core each here, where the other 233 tests take 77 s on two: the tiny model trained to 100 % and the
  # PyTorch comparison of every gradient, whose code the shorter training and gradcheck tests run too.
  export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
  longest='^(a tiny model overfits 20 pairs|agf and PyTorch agree on the loss and every gradient)'
  (cd "$sanitize_dir" && run_ctest -E "$longest") || failed+=("the sanitizer stage")
  stage_times+=("2. sanitizers: $((SECONDS - start)) s (build included)")
elif [ "${AGF_SANITIZERS:-1}" = 0 ]; then
  section "2. sanitizers: skipped (AGF_SANITIZERS=0)"
fi

# ---- 3. fuzzing ------------------------------------------------------------------------------------------
if [ "$fuzz_seconds" != 0 ] && [ "$have_clang" = 1 ]; then
  section "3. fuzzing: each target for ${fuzz_seconds} s (build-sanitize/)"
  start=$SECONDS
  # New inputs go to a scratch folder (the first one named), never into the committed seeds; what crashes
  # is kept in build-sanitize/fuzz-findings/.
  # The targets write each input to a file for the readers to open: in memory (/dev/shm) they run 15 to 50
  # times faster than on a disk.
  fuzz_tmp="${TMPDIR:-/tmp}"
  [ -d /dev/shm ] && [ -w /dev/shm ] && fuzz_tmp=/dev/shm
  scratch="$(mktemp -d "$fuzz_tmp/agf-fuzz-corpus-XXXXXX")"
  trap 'rm -rf "$scratch"' EXIT
  findings="$sanitize_dir/fuzz-findings"
  mkdir -p "$findings"
  for fuzzer in "$sanitize_dir"/fuzz_*; do
    [ -x "$fuzzer" ] || continue
    name="$(basename "$fuzzer")"
    mkdir -p "$scratch/$name"
    regressions=()  # past findings run first, with the seeds
    [ -d "$root/tests/fuzz/regressions/$name" ] && regressions=("$root/tests/fuzz/regressions/$name")
    # -rss_limit_mb: the readers' memory must stay bounded (an allocation sized by a header field is a
    # finding); -timeout: a slow input is one too. A finding's input is named in the report: copy it to
    # tests/fuzz/regressions/<target>/ and it becomes a test (docs/sanitizers-and-fuzzing.md).
    if (cd "$scratch" && TMPDIR="$fuzz_tmp" "$fuzzer" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
          -artifact_prefix="$findings/$name-" "$scratch/$name" "$root/tests/fuzz/corpus/$name" "${regressions[@]}" \
          >"$scratch/$name.log" 2>&1); then
      echo "$name: $(grep -E '^stat::number_of_executed_units' "$scratch/$name.log" | awk '{print $2}') runs," \
           "$(grep -oE 'cov: [0-9]+' "$scratch/$name.log" | tail -n 1 | awk '{print $2}') edges, no findings"
    else
      echo "$name: FOUND SOMETHING"
      tail -n 60 "$scratch/$name.log"
      failed+=("fuzzing ($name)")
    fi
  done
  stage_times+=("3. fuzzing: $((SECONDS - start)) s")
elif [ "$fuzz_seconds" = 0 ]; then
  section "3. fuzzing: skipped (AGF_FUZZ_SECONDS=0)"
else
  section "3. fuzzing: skipped (clang++ not found; tools/setup.sh installs it where apt works)"
fi

section "summary"
printf '%s\n' "${stage_times[@]}"
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all stages passed"
