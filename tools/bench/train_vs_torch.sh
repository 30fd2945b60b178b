#!/usr/bin/env bash
# Training-step throughput, agf against current PyTorch from PyPI (tools/bench/torch_venv.sh) on the identical
# model and batch — cpu-small, 64 sentences × 24 tokens each side, vocabulary 8,000, 2 threads — in one run:
# agf f32 against PyTorch f32, and agf bf16 (`agf bench train --precision bf16`: bf16 operands in every matrix
# product, ops/cpu/gemm_bf16.h) against PyTorch's bf16 autocast — the bf16 rows only on a processor with bf16
# arithmetic; agf's kernel needs AVX512-BF16 and says "refused" (the cells show why) without it. Rounds
# alternate agf and PyTorch so that both see the same machine; each cell is the median of the rounds, with the
# range beside it; agf/torch is the ratio of the medians, and with both precisions each engine's bf16/fp32.
#   tools/bench/train_vs_torch.sh [SCHEME ...]      default: sinusoidal agf-m+pcmv agf-f+pcmv
# Environment: AGF_THREADS (2), AGF_BENCH_ROUNDS (3), AGF_BENCH_STEPS (5 timed steps after a warm-up),
# AGF_TORCH_PYTHON (an interpreter with torch, instead of the cached virtual environment).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
agf="${AGF_BUILD_DIR:-$root/build}/agf"
schemes=("$@")
[ ${#schemes[@]} -eq 0 ] && schemes=(sinusoidal agf-m+pcmv agf-f+pcmv)
threads="${AGF_THREADS:-2}"
rounds="${AGF_BENCH_ROUNDS:-3}"
steps="${AGF_BENCH_STEPS:-5}"
[ -x "$agf" ] || { echo "train_vs_torch: $agf not built (tools/build.sh)" >&2; exit 1; }
python="${AGF_TORCH_PYTHON:-$("$root/tools/bench/torch_venv.sh")}"
export OMP_NUM_THREADS="$threads"

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
# One measurement per line: "ENGINE PRECISION SCHEME TOKENS_PER_SECOND" (or "... refused REASON").
agf_run() {  # agf_run PRECISION
  local output
  if output="$("$agf" bench train --preset cpu-small --precision "$1" --steps "$steps" --schemes "${schemes[@]}" 2>&1)"; then
    grep -m 1 "^matrix products:" <<<"$output" | sed "s/^/agf $1 /" >&2 || true  # the GEMM or bf16 kernel used
    for label in "${schemes[@]}"; do
      awk -v label="$label" -v precision="$1" '$1 == label { print "agf", precision, label, $2 }' <<<"$output"
    done
  else
    echo "agf $1 * refused $(tail -n 1 <<<"$output")"
  fi
}
torch_run() {  # torch_run PRECISION
  for label in "${schemes[@]}"; do
    local pos="${label%%+*}" flags=()
    [[ "$label" == *+pcmv* ]] && flags+=(--pcmv)
    [[ "$label" == *+abs-pe* ]] && flags+=(--abs-pe)
    "$python" "$root/tools/bench/torch_peer.py" bench --preset cpu-small --pos "$pos" "${flags[@]}" \
      --precision "$1" --steps "$steps" --threads "$threads" |
      awk -v label="$label" -v precision="$1" '$1 == label { print "torch", precision, label, $2 }'
  done
}

echo "CPU: $(grep -m 1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "PyTorch: $("$python" -c 'import torch; print(torch.__version__, "(" + torch.backends.cpu.get_cpu_capability() + ")")')"
echo "cpu-small, batch 64 × 24 tokens each side, vocabulary 8000, $threads threads, $steps steps, $rounds rounds"
# bf16 is compared only on a processor with bf16 arithmetic: elsewhere PyTorch's autocast emulates it (on an
# AVX2-only Zen 3: 55 target tokens/s, 27× slower than its f32) and the row would take most of the run.
precisions=(fp32)
if grep -qwE "avx512_bf16|amx_bf16" /proc/cpuinfo; then
  precisions+=(bf16)
else
  echo "bf16: not compared, this processor has neither AVX512-BF16 nor AMX-BF16"
fi
for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  for precision in "${precisions[@]}"; do
    agf_run "$precision" >>"$results"
    torch_run "$precision" >>"$results"
  done
done

# The table: median (min–max) target tokens/s of each engine, and agf / PyTorch of the medians.
awk -v order="${schemes[*]}" -v measured="${precisions[*]}" "$(cat "$root/tools/bench/rounds.awk")"'
  $4 == "refused" { refused[$1 " " $2] = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ refused /, "", refused[$1 " " $2]); next }
  { rates[$1 " " $2 " " $3] = rates[$1 " " $2 " " $3] " " $4 }
  END {
    n = split(order, labels, " ")
    count = split(measured, precisions, " ")
    for (p = 1; p <= count; ++p) {
      precision = precisions[p]
      printf "\n%s: target tokens/s, median (range)\n", precision
      printf "%-18s %22s %22s %10s\n", "scheme", "agf", "PyTorch", "agf/torch"
      for (i = 1; i <= n; ++i) {
        a = rates["agf " precision " " labels[i]]; t = rates["torch " precision " " labels[i]]
        ratio = (a != "" && t != "") ? sprintf("%.2f", median(a) / median(t)) : "-"
        printf "%-18s %22s %22s %10s\n", labels[i], cell(a), cell(t), ratio
      }
      if (("agf " precision) in refused) printf "agf %s: %s\n", precision, refused["agf " precision]
    }
    if (count == 2) {  # fp32 and bf16: what bf16 gains within each engine
      printf "\nbf16 / fp32, ratio of the medians\n"
      printf "%-18s %10s %10s\n", "scheme", "agf", "PyTorch"
      for (i = 1; i <= n; ++i) {
        line = sprintf("%-18s", labels[i])
        split("agf torch", engines, " ")
        for (e = 1; e <= 2; ++e) {
          f = rates[engines[e] " fp32 " labels[i]]; b = rates[engines[e] " bf16 " labels[i]]
          line = line sprintf(" %10s", (f != "" && b != "") ? sprintf("%.2f", median(b) / median(f)) : "-")
        }
        print line
      }
    }
  }' "$results"
