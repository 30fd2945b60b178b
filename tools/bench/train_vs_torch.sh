#!/usr/bin/env bash
# Training-step throughput, agf against PyTorch (Debian's python3-torch) on the identical model and batch:
# cpu-small, 64 sentences × 24 tokens each side, vocabulary 8,000, 2 threads, in one run.
#   tools/bench/train_vs_torch.sh [SCHEME ...]        default: sinusoidal agf-m+pcmv
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
agf="${AGF_BUILD_DIR:-$root/build}/agf"
schemes=("$@")
[ ${#schemes[@]} -eq 0 ] && schemes=(sinusoidal agf-m+pcmv)
threads="${AGF_THREADS:-2}"
echo "== agf (OMP_NUM_THREADS=$threads)"
OMP_NUM_THREADS="$threads" "$agf" bench train --preset cpu-small --schemes "${schemes[@]}" --steps 5
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "== PyTorch: skipped (/usr/bin/python3 has no torch; tools/setup.sh installs python3-torch)"
  exit 0
fi
echo "== PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') (--threads $threads)"
for label in "${schemes[@]}"; do
  pos="${label%%+*}"
  flags=()
  [[ "$label" == *+pcmv* ]] && flags+=(--pcmv)
  [[ "$label" == *+abs-pe* ]] && flags+=(--abs-pe)
  /usr/bin/python3 "$root/tools/bench/torch_peer.py" bench --preset cpu-small --pos "$pos" "${flags[@]}" --steps 5 --threads "$threads"
done
