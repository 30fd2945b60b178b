#!/usr/bin/env bash
# The paper's comparison at convergence on the bundled corpus (docs/results-converged.md): every row of the
# paper's table, AGF_SEEDS seeds each (seed by seed across the rows), cpu-mini trained for 3,000 updates with a
# learning rate decaying linearly to 0 (and early stopping after 5 validations without a lower validation
# loss), each run's best checkpoint evaluated on the validation and test splits. Training pairs
# have at most 40 BPE tokens a side; the test split keeps pairs up to 100, for the length-extrapolation test.
#
# Resumable: run it again after any interruption and it continues the run it was in; a finished run is read
# back from its record in AGF_RESULTS (committed to the repository), never trained twice. About 17 minutes
# a run on 2 cores (14 training, 3 evaluating), 11 rows × 3 seeds.
#
# Settings (environment):
#   AGF_SEEDS      seeds per row (default 3)
#   AGF_WORK       checkpoints and raw metrics (default runs/converged)
#   AGF_RESULTS    each run's record and results.md, to commit (default docs/results/converged)
#   AGF_PRECISION  bf16 (the default on a CPU with AVX512-BF16) or fp32; a grid is one precision throughout
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/build.sh" >/dev/null
agf="${AGF_BUILD_DIR:-$root/build}/agf"
cd "$root"  # relative paths: results.md names the data folder as the repository sees it
work="${AGF_WORK:-runs/converged}"
results="${AGF_RESULTS:-docs/results/converged}"
seeds="${AGF_SEEDS:-3}"
default_precision=fp32
grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null && default_precision=bf16
precision="${AGF_PRECISION:-$default_precision}"
corpus="data/corpora/libreoffice-help-en-de"

if [ ! -f "$work/data/test.bin" ]; then
  echo "== data: joint BPE (8,000 tokens); train and valid pairs of at most 40 tokens, test up to 100 ($work/data)"
  mkdir -p "$work"
  "$agf" bpe learn --input "$corpus/train.en.xz" "$corpus/train.de.xz" --vocab-size 8000 --output "$work/bpe.json"
  "$agf" corpus prepare --train-src "$corpus/train.en.xz" --train-tgt "$corpus/train.de.xz" \
    --valid-src "$corpus/valid.en.xz" --valid-tgt "$corpus/valid.de.xz" \
    --test-src "$corpus/test.en.xz" --test-tgt "$corpus/test.de.xz" \
    --bpe "$work/bpe.json" --out "$work/data" --max-length 40 --test-max-length 100
fi

echo "== the grid: $seeds seeds per row, $precision; records in $results"
"$agf" experiment paper --data "$work/data" --out "$work/grid" --results "$results" --preset cpu-mini \
  --max-steps 3000 --max-tokens 4096 --lr 2e-3 --warmup 400 --lr-schedule linear --valid-every 100 --patience 5 \
  --bleu-sentences 0 --beam 4 --length-buckets 40,60 --seeds "$seeds" --best-count 0 --precision "$precision"
