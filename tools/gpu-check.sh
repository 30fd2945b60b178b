#!/usr/bin/env bash
# Everything that needs a GPU, in one script that fits in 8 minutes on an H200:
#   1. build agf with CUDA for sm_90 in build-gpu/
#   2. the GPU tests (every Catch2 case tagged [gpu]) and `agf gradcheck --all --device cuda` (f64)
#   3. paper-big training steps in bf16: agf's target tokens/s and model FLOP utilisation (MFU) against
#      790 TFLOP/s (cuBLAS bf16 as measured on an H200), next to PyTorch running the same model
#
# The GPU machine has CMake, nvcc and PyTorch but not agf's C++ dependencies: where apt works, run
# tools/gpu-deps.sh first and carry .gpu-deps/ along; this script builds against it when present.
# Environment: AGF_GPU_BATCH / AGF_GPU_LENGTH / AGF_GPU_VOCAB / AGF_GPU_STEPS size the timed steps;
# AGF_PEAK_TFLOPS the MFU denominator (default 790). When OUT names a folder (the device tool's), the whole
# log and the build log are written there too.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$SECONDS
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  exec > >(tee "$OUT/gpu-check.log") 2>&1
fi
section() { printf '\n==== %s  (%d s)\n' "$*" $((SECONDS - started)); }
failures=()

section "GPU"
if ! nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; then
  echo "gpu-check: no NVIDIA GPU is visible (nvidia-smi failed); nothing to check"
  exit 1
fi

section "build (CUDA, sm_90)"
if [ -d .gpu-deps/root ]; then
  deps="$root/.gpu-deps/root"
  export CMAKE_PREFIX_PATH="$deps/usr:$deps/usr/lib/x86_64-linux-gnu/cmake:$deps/usr/share:${CMAKE_PREFIX_PATH:-}"
  export CPATH="$deps/usr/include:$deps/usr/include/eigen3:${CPATH:-}"
  export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  echo "using the dependencies unpacked in .gpu-deps/"
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
mkdir -p build-gpu
build_log=build-gpu/build.log
cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DAGF_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DAGF_NATIVE=ON >"$build_log" 2>&1 && cmake --build build-gpu -j "$(nproc)" >>"$build_log" 2>&1
build_status=$?
[ -n "${OUT:-}" ] && [ -d "$OUT" ] && cp "$build_log" "$OUT/build.log"
if [ $build_status -ne 0 ]; then
  tail -n 40 "$build_log"
  echo "gpu-check: the CUDA build failed (whole log: $build_log)"
  exit 1
fi
echo "built in $((SECONDS - started)) s"

section "GPU tests"
build-gpu/agf_tests "[gpu]" || failures+=("GPU tests")

section "gradcheck of every op on the GPU (f64)"
build-gpu/agf gradcheck --all --device cuda | tail -n 25 || failures+=("gradcheck --device cuda")

section "attention forward+backward: fused vs materializing kernel (bf16, B=32 H=16 T=128 dk=64)"
build-gpu/agf bench attention --device cuda --dtype bf16 --batch 32 --heads 16 --length 128 --head-dim 64 \
  --only agf-m agf-b agf-f alibi || failures+=("bench attention on the GPU")

section "cuBLAS bf16 GEMM through agf (the MFU ceiling)"
build-gpu/agf bench matmul --device cuda --dtype bf16 --sizes 4096 8192 || failures+=("bench matmul on the GPU")

section "paper-big bf16 training steps"
batch=${AGF_GPU_BATCH:-128} length=${AGF_GPU_LENGTH:-64} vocab=${AGF_GPU_VOCAB:-32000} steps=${AGF_GPU_STEPS:-20}
peak=${AGF_PEAK_TFLOPS:-790}
model=(--preset paper-big --pos agf-m --pcmv)
agf_out=$(build-gpu/agf bench train --device cuda --precision bf16 "${model[@]}" --batch "$batch" --length "$length" \
  --vocab "$vocab" --steps "$steps" --peak-tflops "$peak" 2>&1) || failures+=("agf bench train on the GPU")
echo "$agf_out"
torch_out=$(python3 tools/bench/torch_peer.py bench --device cuda --precision bf16 "${model[@]}" --batch "$batch" \
  --length "$length" --vocab "$vocab" --steps "$steps" --warmup 3 --threads "$(nproc)" 2>&1) || failures+=("PyTorch bench")
echo "$torch_out"
# The same model and batch, so the same FLOPs per token: PyTorch's MFU = agf's MFU × (its tokens/s ÷ agf's).
agf_rate=$(echo "$agf_out" | awk '/target tok\/s/ {next} $2 ~ /^[0-9.]+$/ {print $2; exit}')
agf_mfu=$(echo "$agf_out" | awk '$NF ~ /^[0-9.]+%$/ {v=$NF} END {sub("%", "", v); print v}')
torch_rate=$(echo "$torch_out" | awk '/target tokens\/s/ {print $2; exit}')
if [ -n "$agf_rate" ] && [ -n "$torch_rate" ] && [ -n "$agf_mfu" ]; then
  awk -v a="$agf_rate" -v t="$torch_rate" -v m="$agf_mfu" -v p="$peak" 'BEGIN {
    printf "\n%-10s %14s %8s   (paper-big agf-m+pcmv, bf16, MFU against %s TFLOP/s)\n", "", "target tok/s", "MFU", p
    printf "%-10s %14.0f %7.1f%%\n", "agf", a, m
    printf "%-10s %14.0f %7.1f%%\n", "PyTorch", t, m * t / a
    printf "agf / PyTorch: %.2f×\n", a / t }'
fi

section "done"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'gpu-check: FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "gpu-check: all GPU checks passed in $((SECONDS - started)) s"
