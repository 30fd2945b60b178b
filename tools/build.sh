#!/usr/bin/env bash
# Configures and builds agf in build/ (Release, -O3, native). Extra arguments go to cmake's configure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${AGF_BUILD_DIR:-$root/build}"
jobs="${AGF_JOBS:-$(nproc)}"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
elif [ $# -gt 0 ]; then
  cmake "$build_dir" "$@" >/dev/null
fi
cmake --build "$build_dir" -j "$jobs"
