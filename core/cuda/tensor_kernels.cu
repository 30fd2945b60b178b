// Copy-with-cast and fill kernels over strided tensors (see tensor_kernels.h).
#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/runtime.h"
#include "core/cuda/tensor_kernels.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;

// Conversion between any two element types, through the wider of f32/f64 for floating types; f64 to
// f16/bf16 through f32, as the CPU's from_double (device_types.h: from_acc).
template <class Out, class In>
__device__ __forceinline__ Out convert(In value) {
  if constexpr (std::is_same_v<Out, In>) {
    return value;
  } else if constexpr (std::is_integral_v<In> && std::is_integral_v<Out>) {
    return static_cast<Out>(value);
  } else if constexpr (std::is_integral_v<In>) {
    return from_acc<Out>(static_cast<acc_t<Out>>(value));
  } else if constexpr (std::is_integral_v<Out>) {
    return static_cast<Out>(to_acc(value));
  } else if constexpr (std::is_same_v<Out, double> || std::is_same_v<In, double>) {
    return from_acc<Out>(static_cast<double>(to_acc(value)));
  } else {
    return from_acc<Out>(to_acc(value));
  }
}

template <class Out, class In>
__global__ void copy_kernel(Out* out, const In* in, StridedIndex<2> index, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t at[2];
    index.offsets(i, at);
    out[at[0]] = convert<Out>(in[at[1]]);
  }
}

template <class T>
__global__ void fill_kernel(T* out, StridedIndex<1> index, int64_t count, T value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t at[1];
    index.offsets(i, at);
    out[at[0]] = value;
  }
}

// The fill value in memory: the bits of the CPU's from_double<T> (f16/bf16 through f32, core/half.h).
template <class T>
device_t<T> host_value(double value) {
  if constexpr (std::is_same_v<T, Half>) {
    __half_raw raw;
    raw.x = Half(static_cast<float>(value)).bits;
    return __half(raw);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    __nv_bfloat16_raw raw;
    raw.x = BFloat16(static_cast<float>(value)).bits;
    return __nv_bfloat16(raw);
  } else {
    return static_cast<T>(value);
  }
}

}  // namespace

void copy_elements(DType out_dtype, void* out, DType in_dtype, const void* in, const StridedIndex<2>& index,
                   int64_t count, int device) {
  if (count == 0) return;
  DeviceGuard guard(device);
  dispatch_element_type(out_dtype, [&]<class Out>() {
    dispatch_element_type(in_dtype, [&]<class In>() {
      copy_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(
          static_cast<device_t<Out>*>(out), static_cast<const device_t<In>*>(in), index, count);
      AGF_CUDA_CHECK_LAUNCH(copy_kernel);
    });
  });
}

void fill_elements(DType dtype, void* out, const StridedIndex<1>& index, int64_t count, double value, int device) {
  if (count == 0) return;
  DeviceGuard guard(device);
  dispatch_element_type(dtype, [&]<class T>() {
    fill_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(
        static_cast<device_t<T>*>(out), index, count, host_value<T>(value));
    AGF_CUDA_CHECK_LAUNCH(fill_kernel);
  });
}

}  // namespace agf::cuda
