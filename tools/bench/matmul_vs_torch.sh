#!/usr/bin/env bash
# f32 matrix products, agf (ops::matmul: oneDNN, OpenBLAS or Eigen) against torch.matmul of current PyTorch from PyPI
# (tools/bench/torch_venv.sh), the same products in one run: n = 512, 1024, 2048 and the products of a
# cpu-small training step with their transposed forms (agf bench matmul --model-shapes). Both take the best
# of AGF_REPEATS (7) timings per product, AGF_THREADS (2) threads.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
agf="${AGF_BUILD_DIR:-$root/build}/agf"
[ -x "$agf" ] || { echo "matmul_vs_torch: $agf not built (tools/build.sh)" >&2; exit 1; }
python="${AGF_TORCH_PYTHON:-$("$root/tools/bench/torch_venv.sh")}"
threads="${AGF_THREADS:-2}"
repeats="${AGF_REPEATS:-7}"
agf_out="$(OMP_NUM_THREADS="$threads" "$agf" bench matmul --sizes 512 1024 2048 --model-shapes --repeats "$repeats")"
echo "$agf_out" | head -n 1
# The products are read back from agf's table (name m k n layout), so both sides time the same list.
program="$(cat <<'PY'
import sys, time
import torch
threads, repeats = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(threads)
lines = sys.stdin.read().splitlines()
print(f"torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()}), {torch.get_num_threads()} threads")
print(f"{'product':<12} {'m':>5} {'k':>5} {'n':>5} {'layout':>6}  {'agf GFLOP/s':>11}  {'torch GFLOP/s':>13}  {'agf/torch':>9}")
for line in lines[2:]:
    name, m, k, n, layout, _, agf_rate = line.split()
    m, k, n = int(m), int(k), int(n)
    torch.manual_seed(0)
    a = torch.rand(k, m).t() if layout[0] == "T" else torch.rand(m, k)
    b = torch.rand(n, k).t() if layout[1] == "T" else torch.rand(k, n)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    rate = 2 * m * k * n / best * 1e-9
    print(f"{name:<12} {m:>5} {k:>5} {n:>5} {layout:>6}  {float(agf_rate):>11.1f}  {rate:>13.1f}  {float(agf_rate) / rate:>9.2f}")
PY
)"
"$python" -c "$program" "$threads" "$repeats" <<<"$agf_out"
