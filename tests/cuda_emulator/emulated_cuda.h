#pragma once
// The CUDA built-ins that agf's kernels use, for the host compiler. rewrite_kernel_source.cmake puts
// this first in every kernel source it rewrites for the emulator (docs/cuda-emulator.md).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
// cuRAND's device API, the real header: its host path (NV_IF_TARGET's NV_IS_HOST branches) is plain C++.
// Included before the threadIdx/blockDim macros below, because curand_mtgp32_kernel.h declares
// `extern const dim3 blockDim; extern const uint3 threadIdx;` for host compilers (never defined: only its
// MTGP32 functions, which agf does not call, use them).
#include <curand_kernel.h>

#include <algorithm>
#include <cmath>

#include "tests/cuda_emulator/launch.h"
#include "tests/cuda_emulator/thread_scheduler.h"

// Blocks run one at a time, so a block's shared variables can be statics (they keep the previous
// block's values where a GPU's would hold garbage; dynamic shared memory starts as NaN bytes instead).
#undef __shared__
#define __shared__ static

#define threadIdx (::agf::emulator::thread_index())
#define blockIdx (::agf::emulator::block_index())
#define blockDim (::agf::emulator::block_dim())
#define gridDim (::agf::emulator::grid_dim())

// nvcc's cuda_runtime.h takes a kernel (not only a const void*) here; the host compiler's sees only the C form.
template <class Kernel>
cudaError_t cudaFuncSetAttribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attribute, value);
}

inline void __syncthreads() { ::agf::emulator::sync_threads(); }

// Warp shuffles. `width` splits the warp into groups of that many lanes; a source outside the caller's
// group returns the caller's own value, as on the GPU.
template <class T>
T __shfl_sync(unsigned mask, T value, int source_lane, int width = 32) {
  const int lane = ::agf::emulator::lane_id();
  T result;
  ::agf::emulator::warp_exchange(mask, &value, sizeof(T), (lane & ~(width - 1)) + source_lane % width, &result);
  return result;
}

template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
  const int lane = ::agf::emulator::lane_id();
  const int source = lane ^ lane_mask;
  T result;
  ::agf::emulator::warp_exchange(mask, &value, sizeof(T),
                                 (source & ~(width - 1)) == (lane & ~(width - 1)) ? source : lane, &result);
  return result;
}

template <class T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  const int lane = ::agf::emulator::lane_id();
  const int source = lane % width + static_cast<int>(delta) < width ? lane + static_cast<int>(delta) : lane;
  T result;
  ::agf::emulator::warp_exchange(mask, &value, sizeof(T), source, &result);
  return result;
}

// Atomics: a fiber is never pre-empted between barriers, so a plain read-modify-write is atomic here.
template <class T, class U>
T atomicAdd(T* address, U value) {
  const T old = *address;
  *address = static_cast<T>(old + static_cast<T>(value));
  return old;
}

template <class T, class U>
T atomicMin(T* address, U value) {
  const T old = *address;
  *address = std::min(old, static_cast<T>(value));
  return old;
}
