#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (CTest over the Catch2 suite).
# Tests that need a GPU, or an optional Python peer, skip with a printed reason when it is absent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh"
cd "${AGF_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${AGF_JOBS:-$(nproc)}" "$@"
