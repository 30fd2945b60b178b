#!/usr/bin/env bash
# Installs what agf needs to build and test, only what is missing. Idempotent, quiet when all is present.
#   build:  C++20 compiler, cmake, ninja, Eigen 3.4, OpenBLAS (OpenMP build), Catch2 2.x, CLI11, nlohmann-json, fmt, liblzma, ccache
#   checks: clang with its sanitizer and libFuzzer runtimes, and llvm-symbolizer, for tools/test.sh's sanitizer
#           and fuzzing stages. Optional: without clang, the sanitizer build uses g++ and fuzzing is skipped.
#           clang-format, for the test that the sources keep .clang-format's layout (optional: it skips).
#   peers:  conformance oracles used by tests and benchmarks — sacreBLEU, safetensors, tokenizers (pip) and
#           PyTorch (Debian's python3-torch, for /usr/bin/python3). They are optional: when one cannot be
#           installed, the tests that use it skip and say why.
#   onednn: oneDNN (libdnnl-dev), agf's f32 GEMM on Intel processors (ops/cpu/gemm.h). Optional: without it
#           OpenBLAS does the f32 products there too.
#   mpi:    OpenMPI (openmpi-bin, libopenmpi-dev), for data-parallel training under mpirun and its 2-process
#           tests (docs/distributed.md). Optional too: without it agf builds without MPI and those tests skip.
set -euo pipefail

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
apt_updated=0
apt_install() {  # apt_install PACKAGE...: non-interactive, package lists refreshed once per run
  if [ "$apt_updated" = 0 ]; then
    $sudo_cmd apt-get update -qq >/dev/null
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

debian_packages=(g++ cmake ninja-build libeigen3-dev libopenblas-openmp-dev catch2 libcli11-dev nlohmann-json3-dev
                 libfmt-dev liblzma-dev ccache pkg-config xz-utils python3 python3-numpy)
missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  apt_install "${missing[@]}"
fi

# clang for the sanitizer and fuzzing stages of tools/test.sh (libclang-rt-dev: ASan, UBSan and libFuzzer,
# only recommended by clang; llvm: llvm-symbolizer, for stack traces with file and line).
if ! command -v clang++ >/dev/null 2>&1 || ! dpkg-query -W -f='${Status}' libclang-rt-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "setup: installing clang, libclang-rt-dev, llvm (sanitizer and fuzzing stages)" >&2
  apt_install clang libclang-rt-dev llvm 2>/dev/null ||
    echo "setup: could not install clang; tools/test.sh's sanitizer stage will use g++ and fuzzing will be skipped" >&2
fi

# clang-format for the test that the sources keep .clang-format's layout (tests/tools/test_source_format.cpp).
if ! command -v clang-format >/dev/null 2>&1; then
  echo "setup: installing clang-format (the source-format test)" >&2
  apt_install clang-format 2>/dev/null || echo "setup: could not install clang-format; the source-format test will skip" >&2
fi

# PyTorch: the model's conformance and speed peer (tools/bench/torch_peer.py).
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "setup: installing python3-torch (optional peer; a few minutes)" >&2
  apt_install python3-torch libopenblas0-pthread 2>/dev/null ||
    echo "setup: could not install python3-torch; the PyTorch peer tests will skip" >&2
fi

# Python peers from PyPI for the python3 on PATH.
python_peers=(safetensors sacrebleu numpy tokenizers)
for module in "${python_peers[@]}"; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "setup: pip install $module (optional peer)" >&2
    python3 -m pip install -q "$module" >/dev/null 2>&1 || echo "setup: could not install $module; tests using it will skip" >&2
  fi
done

# oneDNN from Debian: the f32 GEMM on Intel processors, when the build (AGF_ONEDNN=AUTO) finds it.
if ! dpkg-query -W -f='${Status}' libdnnl-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "setup: installing libdnnl-dev (oneDNN: the f32 GEMM on Intel processors)" >&2
  apt_install libdnnl-dev 2>/dev/null || echo "setup: could not install oneDNN; agf's f32 GEMM is OpenBLAS's" >&2
fi

# OpenMPI from Debian: mpirun, and the headers and libraries that the build (AGF_MPI=AUTO) finds.
if ! command -v mpirun >/dev/null 2>&1 || ! dpkg-query -W -f='${Status}' libopenmpi-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "setup: installing openmpi-bin, libopenmpi-dev (distributed training and its tests)" >&2
  apt_install openmpi-bin libopenmpi-dev 2>/dev/null ||
    echo "setup: could not install OpenMPI; agf builds without MPI and the distributed tests will skip" >&2
fi
exit 0
