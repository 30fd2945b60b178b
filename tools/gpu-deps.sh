#!/usr/bin/env bash
# Unpacks agf's C++ build dependencies (Eigen, fmt, CLI11, nlohmann-json, Catch2, liblzma headers) from
# Debian packages into .gpu-deps/, for a GPU machine that has CMake, nvcc and PyTorch but no apt access:
# run this where apt works, carry .gpu-deps/ along, and tools/gpu-check.sh builds against it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/.gpu-deps"
packages=(libeigen3-dev libfmt-dev libfmt9 nlohmann-json3-dev libcli11-dev catch2 liblzma-dev liblzma5)
rm -rf "$deps"
mkdir -p "$deps/debs" "$deps/root"
(cd "$deps/debs" && apt-get download "${packages[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
for package in "$deps"/debs/*.deb; do dpkg -x "$package" "$deps/root"; done
# liblzma-dev's liblzma.so points at /lib/...; point it at the unpacked library instead, so the link
# does not depend on which liblzma version the GPU machine's system has.
lib="$deps/root/usr/lib/x86_64-linux-gnu"
shared=$(cd "$deps/root/lib/x86_64-linux-gnu" && ls liblzma.so.5.* 2>/dev/null | head -n 1)
if [ -n "$shared" ]; then ln -sf "../../../lib/x86_64-linux-gnu/$shared" "$lib/liblzma.so"; fi  # relative: travels
rm -rf "$deps/debs"
echo "gpu-deps: unpacked ${#packages[@]} packages into $deps ($(du -sh "$deps" | cut -f1))"
