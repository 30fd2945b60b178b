#!/usr/bin/env bash
# Training-step throughput when another process holds a core: agf's target tokens/s on a quiet machine and
# with a busy loop (one shell spinning) beside it, cpu-small, 64 sentences × 24 tokens each side, all cores'
# threads. One row per spin and scheme: by default agf as it runs (GOMP_SPINCOUNT=3000, tools/agf/openmp_spin.cpp) and
# libgomp's default (GOMP_SPINCOUNT=300000), to show what the short spin buys. Quiet and busy alternate within
# each round; each cell is the median of the rounds with the range beside it, and busy/quiet is the ratio of
# the medians.
#   tools/bench/contention.sh [SCHEME ...]      default: sinusoidal agf-m+pcmv
# Environment: AGF_THREADS (all cores), AGF_BENCH_ROUNDS (3), AGF_BENCH_STEPS (5 timed steps after a warm-up),
# AGF_SPINS ("3000 300000": the GOMP_SPINCOUNT values compared), AGF_PRECISION (fp32, or bf16).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
agf="${AGF_BUILD_DIR:-$root/build}/agf"
schemes=("$@")
[ ${#schemes[@]} -eq 0 ] && schemes=(sinusoidal agf-m+pcmv)
threads="${AGF_THREADS:-$(nproc)}"
rounds="${AGF_BENCH_ROUNDS:-3}"
steps="${AGF_BENCH_STEPS:-5}"
read -r -a spins <<<"${AGF_SPINS:-3000 300000}"
precision="${AGF_PRECISION:-fp32}"
[ -x "$agf" ] || { echo "contention: $agf not built (tools/build.sh)" >&2; exit 1; }

results="$(mktemp)"
busy=""
trap 'rm -f "$results"; [ -n "$busy" ] && kill "$busy" 2>/dev/null' EXIT
measure() {  # measure SPIN LOAD: one "SPIN LOAD SCHEME TOKENS_PER_SECOND" line per scheme
  local output
  output="$(OMP_NUM_THREADS="$threads" GOMP_SPINCOUNT="$1" "$agf" bench train --preset cpu-small --steps "$steps" \
    --precision "$precision" --schemes "${schemes[@]}")"
  for label in "${schemes[@]}"; do
    awk -v spin="$1" -v load="$2" -v label="$label" '$1 == label { print spin, load, label, $2 }' <<<"$output"
  done
}

echo "CPU: $(grep -m 1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "cpu-small, batch 64 × 24 tokens each side, $precision, $threads threads, $steps steps, $rounds rounds"
for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  for spin in "${spins[@]}"; do
    measure "$spin" quiet >>"$results"
    (while :; do :; done) &
    busy=$!
    sleep 0.5
    measure "$spin" busy >>"$results"
    kill "$busy"
    wait "$busy" 2>/dev/null || true
    busy=""
  done
done

awk -v order="${schemes[*]}" -v compared="${spins[*]}" -v own="$(cut -d'"' -f2 <<<"$(grep kShortOpenmpSpin "$root/tools/agf/openmp_spin.h")")" "$(cat "$root/tools/bench/rounds.awk")"'
  { rates[$1 " " $2 " " $3] = rates[$1 " " $2 " " $3] " " $4 }
  END {
    n = split(order, labels, " ")
    printf "\ntarget tokens/s, median (range)\n%-17s %-18s %20s %20s %11s\n", "spin", "scheme", "quiet", "busy core", "busy/quiet"
    count = split(compared, spins, " ")
    for (s = 1; s <= count; ++s) for (i = 1; i <= n; ++i) {
      q = rates[spins[s] " quiet " labels[i]]; b = rates[spins[s] " busy " labels[i]]
      name = spins[s] (spins[s] == own ? " (agf)" : spins[s] == 300000 ? " (libgomp)" : "")
      printf "%-17s %-18s %20s %20s %10.0f%%\n", name, labels[i], cell(q), cell(b), 100 * median(b) / median(q)
    }
  }' "$results"
