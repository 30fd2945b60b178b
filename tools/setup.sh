#!/usr/bin/env bash
# Installs what agf needs to build and test, only what is missing. Idempotent, quiet when all is present.
#   build:  C++20 compiler, cmake, ninja, Eigen 3.4, Catch2 2.x, CLI11, nlohmann-json, fmt, ccache,
#           liblzma (data/ reads the committed corpus from .xz)
#   peers:  python3 packages used as conformance oracles in tests (sacrebleu, safetensors, ...);
#           when they cannot be installed the tests that use them skip and say why.
set -euo pipefail

debian_packages=(g++ cmake ninja-build libeigen3-dev catch2 libcli11-dev nlohmann-json3-dev libfmt-dev
                 ccache pkg-config xz-utils liblzma-dev python3 python3-numpy)

missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq >/dev/null
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python peers: optional. A failure here only means the peer tests skip.
python_peers=(safetensors sacrebleu numpy tokenizers)
for module in "${python_peers[@]}"; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "setup: pip install $module (optional peer)" >&2
    python3 -m pip install -q "$module" >/dev/null 2>&1 || echo "setup: could not install $module; tests using it will skip" >&2
  fi
done
exit 0
