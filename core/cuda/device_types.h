#pragma once
// Element types inside CUDA kernels (nvcc only). agf::Half and agf::BFloat16 have the bit layout of
// CUDA's __half and __nv_bfloat16, so a kernel reinterprets tensor memory as the CUDA type; it loads
// every element into its compute type Acc (float for f16/bf16/f32, double for f64), computes there,
// and rounds once on the store. Reductions and softmax therefore accumulate in f32 (or f64).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/half.h"

namespace agf::cuda {

// clang-format off
// The CUDA type stored in memory for an agf element type.
template <class T> struct device_storage { using type = T; };
template <> struct device_storage<Half> { using type = __half; };
template <> struct device_storage<BFloat16> { using type = __nv_bfloat16; };
template <class T> using device_t = typename device_storage<T>::type;

// The type a kernel computes in for element type T.
template <class T> struct compute_type { using type = float; };
template <> struct compute_type<double> { using type = double; };
template <class T> using acc_t = typename compute_type<T>::type;

__device__ __forceinline__ float to_acc(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_acc(float x) { return x; }
__device__ __forceinline__ double to_acc(double x) { return x; }

template <class T> __device__ __forceinline__ T from_acc(float x);
template <class T> __device__ __forceinline__ T from_acc(double x);
template <> __device__ __forceinline__ __half from_acc<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ float from_acc<float>(float x) { return x; }
template <> __device__ __forceinline__ double from_acc<double>(double x) { return x; }
template <> __device__ __forceinline__ float from_acc<float>(double x) { return static_cast<float>(x); }
template <> __device__ __forceinline__ double from_acc<double>(float x) { return x; }
// f64 -> f16/bf16 as the CPU's from_double (core/dtype.h) rounds: to f32 first, then to the half type.
// Not __double2half, which rounds once: 1 + 2^-11 + 2^-40 is 1 + 2^-10 that way but 1 through f32
// (where it becomes the tie 1 + 2^-11, rounded to even), so a GPU cast would differ from the CPU's.
template <> __device__ __forceinline__ __half from_acc<__half>(double x) { return __float2half_rn(static_cast<float>(x)); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(double x) {
  return __float2bfloat16_rn(static_cast<float>(x));
}

// Casts a tensor's raw pointer to the kernel's element type.
template <class T> device_t<T>* device_pointer(T* pointer) { return reinterpret_cast<device_t<T>*>(pointer); }
template <class T> const device_t<T>* device_pointer(const T* pointer) {
  return reinterpret_cast<const device_t<T>*>(pointer);
}
// clang-format on

// Grid size for `count` independent items at `threads` per block (grid-stride loops cover the rest).
inline unsigned blocks_for(int64_t count, int threads, int64_t max_blocks = 65535LL * 8) {
  const int64_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > max_blocks ? max_blocks : blocks));
}

}  // namespace agf::cuda
