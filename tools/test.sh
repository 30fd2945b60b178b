#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (CTest over the Catch2 suite).
# Tests that need a GPU, or an optional Python peer, skip with a printed reason when it is absent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh"
cd "${AGF_BUILD_DIR:-$root/build}"
set +e
ctest --output-on-failure -j "${AGF_JOBS:-$(nproc)}" "$@" | tee ctest-output.txt
status=${PIPESTATUS[0]}
set -e
# Say why each skipped test was skipped (CTest lists them, but not their reasons), then repeat CTest's
# summary line so that it stays the last word.
if grep -q "^SKIPPED: " Testing/Temporary/LastTest.log 2>/dev/null; then
  echo
  echo "Skipped tests and why:"
  grep "^SKIPPED: " Testing/Temporary/LastTest.log | sort | uniq -c | sed 's/^ */  /'
  grep -E "tests passed, [0-9]+ tests failed out of" ctest-output.txt | tail -n 1
fi
exit "$status"
