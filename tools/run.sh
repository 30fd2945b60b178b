#!/usr/bin/env bash
# The main job: installs what is missing, builds, prepares the bundled English–German corpus (joint BPE,
# 8,000 tokens), trains AGF (agf-m + PCM-V, cpu-small) for a bounded time, then prints the validation
# token accuracy and BLEU and three example translations.
#
# Settings (environment):
#   AGF_MINUTES   training time budget in minutes (default 10)
#   AGF_RUN_DIR   where data, checkpoints and metrics go (default runs/main); re-running continues that run
#                 from its newest checkpoint (one a minute: a kill loses at most the last minute)
#   AGF_POS       positional scheme (default agf-m), AGF_PCMV=0 to turn PCM-V off
#   AGF_PRESET    model size (default cpu-small)
#   AGF_FRESH=1   delete AGF_RUN_DIR first
#   AGF_DEVICE    cpu (default) or cuda[:N]
#   AGF_PRECISION bf16 (the default on a CPU with AVX512-BF16; also on a GPU), fp32 (the default elsewhere)
#                 or fp16 (with a GPU)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh" >/dev/null
agf="${AGF_BUILD_DIR:-$root/build}/agf"

minutes="${AGF_MINUTES:-10}"
run_dir="${AGF_RUN_DIR:-$root/runs/main}"
pos="${AGF_POS:-agf-m}"
pcmv=$([ "${AGF_PCMV:-1}" = "1" ] && echo "--pcmv" || true)
preset="${AGF_PRESET:-cpu-small}"
device="${AGF_DEVICE:-cpu}"
# bf16 matrix products where the hardware has bf16 arithmetic (docs/mixed-precision.md); agf refuses bf16 on
# a CPU without it, so there the default stays fp32.
default_precision=fp32
if [ "$device" = cpu ] && grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null; then default_precision=bf16; fi
precision="${AGF_PRECISION:-$default_precision}"
corpus="$root/data/corpora/libreoffice-help-en-de"
[ "${AGF_FRESH:-0}" = "1" ] && rm -rf "$run_dir"
mkdir -p "$run_dir"

echo "== data: joint BPE (8,000 tokens) and binarized splits in $run_dir/data"
if [ ! -f "$run_dir/data/train.bin" ]; then
  "$agf" bpe learn --input "$corpus/train.en.xz" "$corpus/train.de.xz" --vocab-size 8000 --output "$run_dir/bpe.json"
  "$agf" corpus prepare --train-src "$corpus/train.en.xz" --train-tgt "$corpus/train.de.xz" \
    --valid-src "$corpus/valid.en.xz" --valid-tgt "$corpus/valid.de.xz" \
    --test-src "$corpus/test.en.xz" --test-tgt "$corpus/test.de.xz" \
    --bpe "$run_dir/bpe.json" --out "$run_dir/data" --max-length 100
fi

echo "== training $preset $pos ${pcmv} in $precision for up to $minutes minutes ($run_dir/train)"
resume=$([ -d "$run_dir/train/checkpoints" ] && echo "--resume" || true)
"$agf" train --data "$run_dir/data" --out "$run_dir/train" --preset "$preset" --pos "$pos" $pcmv \
  --max-steps 100000 --max-minutes "$minutes" --max-tokens 4096 --lr 1e-3 --warmup 200 \
  --valid-every 250 --save-every-minutes 1 --bleu-sentences 100 --device "$device" --precision "$precision" $resume

checkpoint="$run_dir/train/checkpoints/best.safetensors"
echo "== validation ($checkpoint)"
"$agf" eval --checkpoint "$checkpoint" --data "$run_dir/data" --split valid --bleu-sentences 500 --device "$device"

echo "== three example translations (validation sentences)"
# (xz stops early when head has its lines: that SIGPIPE is expected, not an error)
(xz -dc "$corpus/valid.en.xz" || true) | head -n 3 > "$run_dir/examples.en"
(xz -dc "$corpus/valid.de.xz" || true) | head -n 3 > "$run_dir/examples.de"
"$agf" translate --checkpoint "$checkpoint" --beam 4 --device "$device" < "$run_dir/examples.en" > "$run_dir/examples.out"
paste -d '\n' "$run_dir/examples.en" "$run_dir/examples.de" "$run_dir/examples.out" /dev/null |
  awk 'NR % 4 == 1 { print "source:      " $0 } NR % 4 == 2 { print "reference:   " $0 } NR % 4 == 3 { print "translation: " $0 } NR % 4 == 0 { print "" }'
