#!/usr/bin/env bash
# BPE speed, agf against SentencePiece (Debian's `sentencepiece`), on the joint train+valid text of the
# bundled corpus (both languages, one sentence a line):
#   learn:  spm_train --model_type=bpe --vocab_size=8000   vs  agf bpe learn --vocab-size 8000
#   encode: spm_encode                                      vs  agf bpe encode
# Prints wall-clock seconds (best of $AGF_BENCH_REPEATS runs, default 3), tokens per sentence, and
# whether agf's decode restores the input byte for byte.
#   tools/bench/bpe_vs_spm.sh            (builds agf first if build/agf is missing)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
agf="${AGF:-$root/build/agf}"
corpus="$root/data/corpora/libreoffice-help-en-de"
repeats="${AGF_BENCH_REPEATS:-3}"

if ! command -v spm_train >/dev/null 2>&1; then
  echo "bench: installing sentencepiece from Debian" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends sentencepiece >/dev/null
fi
[ -x "$agf" ] || "$root/tools/build.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for split in train valid; do
  for lang in en de; do xz -dc "$corpus/$split.$lang.xz"; done
done > "$work/joint.txt"
lines=$(wc -l < "$work/joint.txt")
bytes=$(wc -c < "$work/joint.txt")

# best_of COMMAND...: runs it $repeats times, prints the fastest wall time in seconds
best_of() {
  local best=""
  for _ in $(seq "$repeats"); do
    local start end elapsed
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    elapsed=$(awk -v a="$end" -v b="$start" 'BEGIN { print a - b }')
    if [ -z "$best" ] || awk -v a="$elapsed" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$elapsed; fi
  done
  printf '%.2f' "$best"
}

spm_learn() { spm_train --input="$work/joint.txt" --model_type=bpe --vocab_size=8000 --model_prefix="$work/spm" >/dev/null 2>&1; }
agf_learn() { "$agf" bpe learn --input "$work/joint.txt" --vocab-size 8000 --output "$work/agf.json" 2>/dev/null; }
spm_enc() { spm_encode --model="$work/spm.model" < "$work/joint.txt" > "$work/spm.out"; }
agf_enc() { "$agf" bpe encode --model "$work/agf.json" < "$work/joint.txt" > "$work/agf.out"; }

spm_learn_s=$(best_of spm_learn)
agf_learn_s=$(best_of agf_learn)
spm_encode_s=$(best_of spm_enc)
agf_encode_s=$(best_of agf_enc)

spm_tokens=$(wc -w < "$work/spm.out")
agf_tokens=$(wc -w < "$work/agf.out")
"$agf" bpe decode --model "$work/agf.json" < "$work/agf.out" > "$work/agf.back"
if cmp -s "$work/agf.back" "$work/joint.txt"; then round_trip="yes"; else round_trip="NO"; fi

echo "input: $lines lines, $bytes bytes ($(nproc) CPUs), best of $repeats runs"
printf '%-22s %12s %12s\n' "" "sentencepiece" "agf"
printf '%-22s %12s %12s\n' "learn, vocab 8000 (s)" "$spm_learn_s" "$agf_learn_s"
printf '%-22s %12s %12s\n' "encode (s)" "$spm_encode_s" "$agf_encode_s"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-22s %12s %12s\n' "tokens per sentence" "$(ratio "$spm_tokens" "$lines")" "$(ratio "$agf_tokens" "$lines")"
echo "agf decode(encode(x)) == x: $round_trip"
echo "speed-ups: learn $(ratio "$spm_learn_s" "$agf_learn_s")x, encode $(ratio "$spm_encode_s" "$agf_encode_s")x"
