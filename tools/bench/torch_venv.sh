#!/usr/bin/env bash
# Prints the path of a Python interpreter with current PyTorch from PyPI (MKL + oneDNN on x86-64), the peer
# a user would install today: a virtual environment cached outside the repository, made on first use.
#   tools/bench/torch_venv.sh            -> e.g. /root/.cache/agf/torch-venv/bin/python
# AGF_TORCH_VENV=DIR puts it elsewhere. The wheel brings CUDA libraries (about 5 GiB installed, a few
# minutes on first use); the test suite never needs it (its conformance tests use Debian's python3-torch).
# Progress goes to stderr, the path alone to stdout; exit 1, with the reason, when it cannot be made.
set -euo pipefail
venv="${AGF_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/agf/torch-venv}"
python="$venv/bin/python"
if [ -x "$python" ] && "$python" -c "import torch, numpy" 2>/dev/null; then
  echo "$python"
  exit 0
fi
base=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import venv, ensurepip" 2>/dev/null; then
    base="$candidate"
    break
  fi
done
if [ -z "$base" ]; then
  echo "torch_venv: no python3 with venv and ensurepip (apt-get install python3-venv)" >&2
  exit 1
fi
echo "torch_venv: installing PyTorch from PyPI into $venv (first use; about 5 GiB)" >&2
mkdir -p "$(dirname "$venv")"
"$base" -m venv "$venv" >&2
if ! "$venv/bin/pip" install -q --disable-pip-version-check torch numpy >&2; then
  echo "torch_venv: pip install torch numpy failed in $venv" >&2
  exit 1
fi
"$python" -c "import torch, numpy" >&2
echo "$python"
