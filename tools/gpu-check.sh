#!/usr/bin/env bash
# Everything that needs a GPU, as one staged script that always leaves a result. Each stage runs under its
# own time limit and is skipped once the script's budget is nearly spent; the numbers come before the
# tests. After every stage, $OUT/results.json holds what is known so far, and $OUT/logs/ each stage's log.
#
#   tools/gpu-check.sh [--budget SECONDS] [--stages LIST]      on a machine with an NVIDIA GPU
#   tools/gpu-check.sh --rehearse BUILD_DIR [--budget SECONDS]  here, on the CUDA emulator, at tiny sizes
#
# Stages, in order (docs/cuda.md, "Running on a GPU"):
#   build        configure build-gpu/ (CUDA, sm_90, no emulator) and build `agf` only, -k 0 so every error shows
#   smoke        2 training steps, tiny f32 and paper-big bf16: the loss must be finite and start near ln V
#   matmul       cuBLAS GEMM through agf in bf16, fp16 and f32: the ceiling for MFU
#   attention    the fused and the materializing attention kernels, forward + backward, bf16
#   train-bf16   paper-big agf-m + PCM-V training steps in bf16: target tokens/s and MFU
#   train-fp16   the same in fp16 (loss scaling)
#   torch        PyTorch running the same model, batch and precision (bf16 autocast), for the ratio
#   build-tests  build agf_tests
#   gpu-tests    every Catch2 case tagged [gpu], split across processes
#   gradcheck    `agf gradcheck --all --device cuda` (f64)
#   paper-grid   the paper's rows at paper-big on the bundled corpus, a fixed number of updates each
#
# The GPU machine has CMake, nvcc and PyTorch but maybe not agf's C++ dependencies: where apt works, run
# tools/gpu-deps.sh first and carry .gpu-deps/ along; this script builds against it when present.
# Environment: OUT (where results.json and the logs go; default gpu-check-out/), AGF_GPU_BATCH,
# AGF_GPU_LENGTH, AGF_GPU_VOCAB, AGF_GPU_STEPS (the timed training steps), AGF_PEAK_TFLOPS (the MFU
# denominator, default 790: cuBLAS bf16 on an H200), AGF_GPU_GRID_STEPS (updates per paper-grid row),
# AGF_TORCH_PYTHON (the Python with PyTorch; default: the first of python3 and /usr/bin/python3 that
# imports torch, and in a rehearsal also the cached PyPI venv of tools/bench/torch_venv.sh).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; }
budget=480
stages_wanted=""
rehearse_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget="${2:-}"; shift 2 ;;
    --stages) stages_wanted=",${2:-},"; shift 2 ;;
    --rehearse) rehearse_dir="${2:-}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
if ! [[ "$budget" =~ ^[0-9]+$ ]] || [ "$budget" -lt 30 ]; then
  echo "gpu-check: --budget must be a whole number of seconds, at least 30 (got '$budget')" >&2; exit 2
fi
all_stages=(build smoke matmul attention train-bf16 train-fp16 torch build-tests gpu-tests gradcheck paper-grid)
for wanted in ${stages_wanted//,/ }; do
  if [[ " ${all_stages[*]} " != *" $wanted "* ]]; then
    echo "gpu-check: --stages: unknown stage '$wanted' (the stages: ${all_stages[*]})" >&2; exit 2
  fi
done
out="${OUT:-$root/gpu-check-out}"
mkdir -p "$out/logs"
exec > >(tee "$out/gpu-check.log") 2>&1
started=$SECONDS
reserve=15  # seconds kept back for writing the results after a stage's timeout

# ---- the two modes ---------------------------------------------------------------------------------------
if [ -n "$rehearse_dir" ]; then
  # Every command of a GPU run, against the emulator's binaries (already built), at tiny sizes. What the
  # rehearsal cannot try: nvidia-smi, the sm_90 build from scratch, real speed.
  mode=rehearsal
  build_dir="$(cd "$rehearse_dir" && pwd)" || exit 2
  agf="$build_dir/agf_emulated" tests="$build_dir/agf_tests_emulated"
  agf_target=agf_emulated tests_target=agf_tests_emulated
  configure_dir="$out/configure-rehearsal"
  batch=4 length=6 vocab=50 steps=2 preset=tiny smoke_preset=tiny matmul_sizes="64 96"
  attention_shape=(--batch 1 --heads 2 --length 8 --head-dim 16)
  gradcheck_args=(--op layer_norm)
  test_spec="[gpu][concat],[gpu][rope]"
  torch_device=cpu
  grid_steps=3 grid_preset=tiny grid_vocab=300 grid_bleu=2 grid_corpus=tests/fixtures/tiny-en-de
  grid_work="$out/paper-grid-work"
  grid_train_files="train.en train.de" grid_valid_files="train.en train.de"
else
  mode=gpu
  build_dir="$root/build-gpu"
  agf="$build_dir/agf" tests="$build_dir/agf_tests"
  agf_target=agf tests_target=agf_tests
  configure_dir="$build_dir"
  batch=${AGF_GPU_BATCH:-128} length=${AGF_GPU_LENGTH:-64} vocab=${AGF_GPU_VOCAB:-32000} steps=${AGF_GPU_STEPS:-20}
  preset=paper-big smoke_preset=paper-big matmul_sizes="4096 8192"
  attention_shape=(--batch 32 --heads 16 --length 128 --head-dim 64)
  gradcheck_args=(--all)
  test_spec="[gpu]"
  torch_device=cuda
  grid_steps=${AGF_GPU_GRID_STEPS:-600} grid_preset=paper-big grid_vocab=8000 grid_bleu=50
  grid_work="$build_dir/paper-grid"
  grid_corpus=data/corpora/libreoffice-help-en-de
  grid_train_files="train.en.xz train.de.xz" grid_valid_files="valid.en.xz valid.de.xz"
fi
peak=${AGF_PEAK_TFLOPS:-790}
model=(--preset "$preset" --pos agf-m --pcmv)
workers=$(nproc)

# ---- results.json ----------------------------------------------------------------------------------------
# One record per stage: {"name", "status" (passed, failed, timed out, skipped), "seconds", "limit_s",
# "reason", "log", "metrics": {...}}. Rewritten whole after every stage, through a temporary file.
records=()
versions_json="{}"
json_string() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}; s=${s//$'\n'/ }; s=${s//$'\t'/ }; s=${s//$'\r'/ }
  printf '"%s"' "$s"
}
# metric KEY VALUE: '"KEY": VALUE' when VALUE is a number, else '"KEY": "VALUE"'.
metric() {
  if [[ "$2" =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then printf '%s: %s' "$(json_string "$1")" "$2"
  else printf '%s: %s' "$(json_string "$1")" "$(json_string "$2")"; fi
}
write_results() {
  local passed=0 failed=0 skipped=0 record
  for record in "${records[@]}"; do
    case "$record" in
      *'"status": "passed"'*) passed=$((passed + 1)) ;;
      *'"status": "skipped"'*) skipped=$((skipped + 1)) ;;
      *) failed=$((failed + 1)) ;;
    esac
  done
  {
    printf '{\n  "script": "tools/gpu-check.sh",\n  "mode": "%s",\n' "$mode"
    printf '  "commit": %s,\n' "$(json_string "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)")"
    printf '  "budget_s": %d,\n  "elapsed_s": %d,\n' "$budget" $((SECONDS - started))
    printf '  "versions": %s,\n' "$versions_json"
    printf '  "summary": {"passed": %d, "failed": %d, "skipped": %d},\n' $passed $failed $skipped
    printf '  "stages": [\n'
    local i
    for i in "${!records[@]}"; do
      printf '    %s%s\n' "${records[$i]}" "$([ "$i" -lt $((${#records[@]} - 1)) ] && echo ,)"
    done
    printf '  ]\n}\n'
  } >"$out/results.json.tmp" && mv "$out/results.json.tmp" "$out/results.json"
}
# record NAME STATUS SECONDS LIMIT REASON [METRIC ...]
record() {
  local name=$1 status=$2 seconds=$3 limit=$4 reason=$5; shift 5
  local metrics="" item
  for item in "$@"; do metrics+="${metrics:+, }$item"; done
  records+=("{\"name\": $(json_string "$name"), \"status\": \"$status\", \"seconds\": $seconds, \"limit_s\": $limit, \"reason\": $(json_string "$reason"), \"log\": \"logs/$name.log\", \"metrics\": {$metrics}}")
  write_results
}

# ---- stages ----------------------------------------------------------------------------------------------
section() { printf '\n==== %s  (%d s of %d)\n' "$*" $((SECONDS - started)) "$budget"; }
failures=()
declare -A stage_status=()
# run_stage NAME NEED LIMIT COMMAND...: runs COMMAND (a function of this script or a program) under
# `timeout LIMIT`, cut to what the budget has left; skipped when fewer than NEED seconds are left, when
# --stages leaves it out, or when a stage it depends on (REQUIRES, set before the call) did not pass.
# Sets $stage_log; the caller then calls finish_stage with what it parsed from the log.
run_stage() {
  local name=$1 need=$2 limit=$3; shift 3
  stage_log="$out/logs/$name.log"
  stage_started=$SECONDS stage_limit=$limit
  local left=$((budget - (SECONDS - started) - reserve)) dependency
  if [ -n "$stages_wanted" ] && [[ "$stages_wanted" != *",$name,"* ]]; then
    skip_stage "$name" "not in --stages"; stage_status[$name]="not selected"; return 1
  fi
  # A dependency left out by --stages does not block (its outputs may be there from an earlier call).
  for dependency in ${REQUIRES:-}; do
    case "${stage_status[$dependency]:-not selected}" in
      passed|"not selected") ;;
      *) skip_stage "$name" "needs stage '$dependency', which ${stage_status[$dependency]}"; return 1 ;;
    esac
  done
  if [ "$left" -lt "$need" ]; then
    skip_stage "$name" "the budget has $left s left, the stage needs $need"; return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  stage_limit=$limit
  section "$name (limit $limit s)"
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$stage_log"
  stage_exit=${PIPESTATUS[0]}
  return 0
}
skip_stage() {
  section "$1: skipped ($2)"
  stage_status[$1]=skipped
  record "$1" skipped 0 0 "$2"
}
# finish_stage NAME [REASON [METRIC ...]]: passed when the command exited 0 and no REASON was given.
finish_stage() {
  local name=$1 reason=${2:-} status=passed; shift; [ $# -gt 0 ] && shift
  if [ "$stage_exit" -eq 124 ] || [ "$stage_exit" -eq 137 ]; then
    status="timed out" reason="stopped after its limit of $stage_limit s${reason:+; $reason}"
  elif [ "$stage_exit" -ne 0 ]; then
    status=failed reason="exit status $stage_exit${reason:+; $reason}"
  elif [ -n "$reason" ]; then
    status=failed
  fi
  stage_status[$name]=$status
  [ "$status" = passed ] || failures+=("$name ($status)")
  printf '%s: %s in %d s%s\n' "$name" "$status" $((SECONDS - stage_started)) "${reason:+ — $reason}"
  record "$name" "$status" $((SECONDS - stage_started)) "$stage_limit" "$reason" "$@"
}
# The value in column COLUMN of the first line of FILE whose first field is KEY.
column_of() { awk -v key="$1" -v column="$2" '$1 == key { print $column; exit }' "$3"; }

# ---- versions ----------------------------------------------------------------------------------------------
section "versions ($mode)"
find_nvcc() {
  command -v nvcc && return
  local candidate
  for candidate in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc /opt/cuda/bin/nvcc /usr/lib/cuda/bin/nvcc; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
}
nvcc=$(find_nvcc)
[ -n "$nvcc" ] && export PATH="$(dirname "$nvcc"):$PATH"
first_line() { "$@" 2>&1 | head -n 1; }
gxx_version=$(first_line g++ --version)
cmake_version=$(first_line cmake --version)
nvcc_version=$([ -n "$nvcc" ] && "$nvcc" --version 2>&1 | grep -i release | head -n 1)
ninja_version=$(first_line ninja --version)
python_version=$(first_line python3 --version)
# The first Python that imports torch: AGF_TORCH_PYTHON, python3, Debian's, and in a rehearsal the cached venv.
python=python3
candidates=(python3 /usr/bin/python3)
[ "$mode" = rehearsal ] && candidates+=("${XDG_CACHE_HOME:-$HOME/.cache}/agf/torch-venv/bin/python")
[ -n "${AGF_TORCH_PYTHON:-}" ] && candidates=("$AGF_TORCH_PYTHON")
for candidate in "${candidates[@]}"; do
  if "$candidate" -c 'import torch' 2>/dev/null; then python=$candidate; break; fi
done
torch_version=$("$python" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null | tail -n 1)
if [ "$mode" = gpu ]; then
  gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -n 1)
  nvidia-smi >/dev/null 2>&1 || gpu=""
else
  gpu="none: rehearsal on the CUDA emulator ($agf)"
fi
versions_json="{$(metric gxx "$gxx_version"), $(metric cmake "$cmake_version"), $(metric nvcc "${nvcc_version:-not found}"), $(metric nvcc_path "${nvcc:-}"), $(metric ninja "${ninja_version:-not found}"), $(metric python "$python_version"), $(metric torch "${torch_version:-not importable}"), $(metric gpu "${gpu:-not visible}"), $(metric cpus "$workers")}"
printf '%-8s %s\n' g++ "$gxx_version" cmake "$cmake_version" nvcc "${nvcc_version:-not found} ${nvcc:-}" \
  ninja "${ninja_version:-not found}" python3 "$python_version" torch "${torch_version:-not importable}" \
  gpu "${gpu:-not visible}" cpus "$workers"
write_results
if [ "$mode" = gpu ] && [ -z "$gpu" ]; then
  echo "gpu-check: no NVIDIA GPU is visible (nvidia-smi failed); nothing to check"
  exit 1
fi

# ---- build ---------------------------------------------------------------------------------------------
generator=()
keep_going=(-k)                      # make: keep going after an error
if command -v ninja >/dev/null; then generator=(-G Ninja); keep_going=(-k 0); fi  # ninja: never stop
# A rehearsal configures for real (into a scratch folder) but only dry-runs the build (-n): the emulator's
# binaries are built already, and a test must not start a rebuild of them.
[ "$mode" = rehearsal ] && keep_going+=(-n)
build_stage() {
  if [ -d .gpu-deps/root ]; then
    local deps="$root/.gpu-deps/root"
    export CMAKE_PREFIX_PATH="$deps/usr:$deps/usr/lib/x86_64-linux-gnu/cmake:$deps/usr/share:${CMAKE_PREFIX_PATH:-}"
    export CPATH="$deps/usr/include:$deps/usr/include/eigen3:${CPATH:-}"
    export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
    echo "using the dependencies unpacked in .gpu-deps/"
  fi
  cmake -S . -B "$configure_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DAGF_CUDA=ON \
    ${nvcc:+-DCMAKE_CUDA_COMPILER="$nvcc"} -DCMAKE_CUDA_ARCHITECTURES=90 -DAGF_CUDA_EMULATOR=OFF -DAGF_NATIVE=ON \
    || return 1
  cmake --build "$build_dir" --target "$1" -j "$workers" -- "${keep_going[@]}"
}
export -f build_stage
export root configure_dir build_dir nvcc workers
export generator_flags="${generator[*]}" keep_going_flags="${keep_going[*]}"
# `timeout` runs programs, not shell functions: each stage body runs in `bash -c` with the function exported.
build_body='generator=($generator_flags); keep_going=($keep_going_flags); build_stage "$0"'

if run_stage build 60 300 bash -c "$build_body" "$agf_target"; then
  errors=$(grep -c -E '(error|Error)[: ]' "$stage_log" 2>/dev/null)
  finish_stage build "$([ "$stage_exit" -ne 0 ] && echo "$errors error lines; the first: $(grep -m 1 -E '(error|Error)[: ]' "$stage_log")")" \
    "$(metric error_lines "${errors:-0}")"
fi
REQUIRES=build

# ---- the numbers ----------------------------------------------------------------------------------------
# smoke: `bench train` refuses (exit 1) a run whose loss is not finite or does not start near ln V.
smoke_body() {
  "$agf" bench train --preset tiny --device cuda --batch 4 --length 6 --vocab 50 --steps 2 &&
    "$agf" bench train --preset "$smoke_preset" --device cuda --precision bf16 --batch 8 --length 16 --vocab "$vocab" --steps 2
}
export -f smoke_body
export agf tests smoke_preset vocab
if run_stage smoke 20 90 bash -c smoke_body; then
  finish_stage smoke "" "$(metric tiny_first_loss "$(awk '$1 == "agf-m" { print $6; exit }' "$stage_log")")" \
    "$(metric bf16_first_loss "$(awk '$1 == "agf-m" { v = $6 } END { print v }' "$stage_log")")"
fi
REQUIRES="build smoke"

matmul_body() {
  local dtype status=0
  for dtype in bf16 fp16 f32; do
    "$agf" bench matmul --device cuda --dtype "$dtype" --sizes $matmul_sizes || status=1
  done
  return $status
}
export -f matmul_body
export matmul_sizes
if run_stage matmul 20 90 bash -c matmul_body; then
  # The TFLOP/s of the largest size in each dtype: a table "matmul DTYPE on ..." of rows "n=SIZE m k n layout ms TFLOP/s".
  matmul_metrics=()
  while read -r dtype rate; do matmul_metrics+=("$(metric "${dtype}_tflops" "$rate")"); done < <(
    awk '/^matmul / { dtype = $2 } /^n=/ { rate[dtype] = $NF } END { for (d in rate) print d, rate[d] }' "$stage_log")
  finish_stage matmul "" "${matmul_metrics[@]}"
fi

if run_stage attention 20 60 "$agf" bench attention --device cuda --dtype bf16 "${attention_shape[@]}" \
     --only agf-m agf-b agf-f alibi; then
  finish_stage attention
fi

declare -A train_rate=()
train_stage() {  # train_stage PRECISION
  if run_stage "train-$1" 30 120 "$agf" bench train --device cuda --precision "$1" "${model[@]}" --batch "$batch" \
       --length "$length" --vocab "$vocab" --steps "$steps" --peak-tflops "$peak"; then
    # The row: scheme, target tok/s, ms/step, TFLOP/s, MFU, first loss, →, last loss
    train_rate[$1]=$(column_of agf-m+pcmv 2 "$stage_log")
    finish_stage "train-$1" "" "$(metric tokens_per_s "$(column_of agf-m+pcmv 2 "$stage_log")")" \
      "$(metric ms_per_step "$(column_of agf-m+pcmv 3 "$stage_log")")" \
      "$(metric tflops "$(column_of agf-m+pcmv 4 "$stage_log")")" \
      "$(metric mfu_percent "$(column_of agf-m+pcmv 5 "$stage_log" | tr -d %)")" \
      "$(metric first_loss "$(column_of agf-m+pcmv 6 "$stage_log")")" \
      "$(metric last_loss "$(column_of agf-m+pcmv 8 "$stage_log")")"
  fi
}
train_stage bf16
train_stage fp16

# The peer: the same model, batch and steps. In a rehearsal torch may be absent here (CI); then say so.
if [ -z "$torch_version" ]; then
  skip_stage torch "$python cannot import torch"
elif run_stage torch 30 150 "$python" tools/bench/torch_peer.py bench --device "$torch_device" \
       --precision "$([ "$torch_device" = cuda ] && echo bf16 || echo fp32)" "${model[@]}" --batch "$batch" \
       --length "$length" --vocab "$vocab" --steps "$steps" --warmup 3 --threads "$workers"; then
  torch_rate=$(column_of agf-m+pcmv 2 "$stage_log")
  agf_rate=${train_rate[bf16]:-}
  ratio=""
  [ -n "$torch_rate" ] && [ -n "$agf_rate" ] && ratio=$(awk -v a="$agf_rate" -v t="$torch_rate" 'BEGIN { printf "%.3f", a / t }')
  finish_stage torch "" "$(metric tokens_per_s "$torch_rate")" "$(metric agf_over_torch_bf16 "${ratio:-unknown}")"
fi

# ---- the tests ------------------------------------------------------------------------------------------
REQUIRES=build
if run_stage build-tests 60 300 bash -c "$build_body" "$tests_target"; then finish_stage build-tests; fi

# gpu-tests: the names of the [gpu] cases dealt round-robin to up to 8 processes, each under the stage's
# limit; Catch2 takes names as test specs, so ',', '[', ']' and '\' in them are escaped.
gpu_tests_body() {
  local shards=$((workers < 8 ? workers : 8)) names=() pids=() i pid status=0
  mapfile -t names < <("$tests" "$test_spec" --list-test-names-only | sed -e '/^$/d' -e 's/[][,\\]/\\&/g')
  [ ${#names[@]} -gt 0 ] || { echo "no test case matches $test_spec"; return 1; }
  [ $shards -gt ${#names[@]} ] && shards=${#names[@]}
  echo "${#names[@]} test cases in $shards processes"
  for ((i = 0; i < shards; i++)); do
    local mine=() j
    for ((j = i; j < ${#names[@]}; j += shards)); do mine+=("${names[$j]}"); done
    "$tests" --durations yes "${mine[@]}" >"$out/logs/gpu-tests-$i.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  for ((i = 0; i < shards; i++)); do
    echo "---- process $i: $(grep -E '^(All tests passed|test cases:)' "$out/logs/gpu-tests-$i.log" | tail -n 1)"
  done
  return $status
}
export -f gpu_tests_body
export test_spec out
REQUIRES="build build-tests"
if run_stage gpu-tests 30 180 bash -c gpu_tests_body; then
  # "All tests passed (A assertions in C test cases)" or "test cases: C | P passed | F failed".
  read -r cases failed_cases < <(cat "$out"/logs/gpu-tests-*.log | awk '
    /^All tests passed/ { for (i = 1; i <= NF; i++) if ($i == "in") cases += $(i + 1) }
    /^test cases:/ { cases += $3; for (i = 1; i <= NF; i++) if ($i ~ /^failed/) failed += $(i - 1) }
    END { print cases + 0, failed + 0 }')
  finish_stage gpu-tests "$([ "${failed_cases:-0}" -gt 0 ] && echo "$failed_cases test cases failed (logs/gpu-tests-*.log)")" \
    "$(metric test_cases "$cases")" "$(metric failed_test_cases "$failed_cases")"
fi

REQUIRES=build
if run_stage gradcheck 30 150 "$agf" gradcheck "${gradcheck_args[@]}" --device cuda; then
  # "N checked, M failed"
  finish_stage gradcheck "" "$(metric checked "$(awk '/ checked, / { print $1 }' "$stage_log")")" \
    "$(metric failed "$(awk '/ checked, / { print $3 }' "$stage_log")")"
fi

# ---- the paper's rows at paper-big ---------------------------------------------------------------------
# vanilla (sinusoidal), AGF, AGF + PCM-V, AGF-M + PCM-V, AGF-M + PCM-V + PE, ALiBi-mult + PCM-V: the same data,
# seed and number of updates each. The runs (checkpoints of ~1 GB) stay in build-gpu/paper-grid/; the results
# table comes back as paper-grid.md. Run again on a warm machine (--stages paper-grid), it resumes the grid.
paper_grid_body() {
  local work="$grid_work" corpus="$root/$grid_corpus"
  local train=($grid_train_files) valid=($grid_valid_files)
  mkdir -p "$work"
  if [ ! -f "$work/data/train.bin" ]; then
    "$agf" bpe learn --input "$corpus/${train[0]}" "$corpus/${train[1]}" --vocab-size "$grid_vocab" \
      --output "$work/bpe.json" || return 1
    "$agf" corpus prepare --train-src "$corpus/${train[0]}" --train-tgt "$corpus/${train[1]}" \
      --valid-src "$corpus/${valid[0]}" --valid-tgt "$corpus/${valid[1]}" --bpe "$work/bpe.json" \
      --out "$work/data" --max-length 100 || return 1
  fi
  "$agf" experiment paper --data "$work/data" --out "$work/grid" --preset "$grid_preset" --device cuda \
    --precision bf16 --max-steps "$grid_steps" --valid-every $((grid_steps / 3 > 0 ? grid_steps / 3 : 1)) \
    --warmup $((grid_steps / 3 > 0 ? grid_steps / 3 : 1)) --bleu-sentences "$grid_bleu" --seeds 1 --best-count 0 \
    --schemes vanilla agf-b agf-b+pcmv agf-m+pcmv agf-m+pcmv+abs-pe alibi-mult+pcmv
  local status=$?
  cp "$work/grid/results.md" "$out/paper-grid.md" 2>/dev/null
  return $status
}
export -f paper_grid_body
export grid_corpus grid_vocab grid_steps grid_preset grid_bleu grid_work
export grid_train_files grid_valid_files
REQUIRES="build smoke"
if run_stage paper-grid 90 420 bash -c paper_grid_body; then
  finish_stage paper-grid "$([ ! -f "$out/paper-grid.md" ] && echo "no results table")" \
    "$(metric updates_per_row "$grid_steps")" "$(metric table "paper-grid.md")"
fi

section "done"
write_results
if [ ${#failures[@]} -gt 0 ]; then
  printf 'gpu-check: FAILED: %s\n' "${failures[@]}"
  exit 1
fi
if ! grep -q '"status": "passed"' "$out/results.json"; then
  echo "gpu-check: no stage ran ($out/results.json says why)"
  exit 1
fi
echo "gpu-check: every stage that ran passed, in $((SECONDS - started)) s ($out/results.json)"
