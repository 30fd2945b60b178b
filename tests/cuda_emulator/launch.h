#pragma once
// Kernel launches in emulated kernel sources. rewrite_kernel_source.cmake turns
//     kernel<<<grid, block, shared_bytes, stream>>>(a, b)
// into
//     kernel | ::agf::emulator::Launch(grid, block, shared_bytes, stream).args(a, b)
// which binds the arguments, then (operator|) runs the kernel on the emulated device.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tests/cuda_emulator/thread_scheduler.h"

namespace agf::emulator {

// Runs `thread_body` as every thread of the launch on the current device; like a CUDA launch, a bad
// configuration or a failure inside the kernel is returned by the next cudaGetLastError().
void launch_kernel(const void* kernel, const LaunchShape& shape, cudaStream_t stream,
                   const std::function<void()>& thread_body);

template <class... Arguments>
struct BoundLaunch {
  LaunchShape shape;
  cudaStream_t stream;
  std::tuple<Arguments...> arguments;
};

struct Launch {
  Launch(dim3 grid, dim3 block, std::size_t shared_bytes = 0, cudaStream_t stream = nullptr)
      : shape{grid, block, shared_bytes}, stream(stream) {}

  template <class... Arguments>
  BoundLaunch<std::decay_t<Arguments>...> args(Arguments&&... arguments) const {
    return {shape, stream, std::tuple<std::decay_t<Arguments>...>(std::forward<Arguments>(arguments)...)};
  }

  LaunchShape shape;
  cudaStream_t stream;
};

template <class Kernel, class... Arguments>
void run_bound(Kernel kernel, const BoundLaunch<Arguments...>& bound) {
  launch_kernel(reinterpret_cast<const void*>(kernel), bound.shape, bound.stream,
                [&] { std::apply([&](const Arguments&... arguments) { kernel(arguments...); }, bound.arguments); });
}

// Every thread receives its own copy of the arguments, converted to the kernel's parameter types.
template <class... Parameters, class... Arguments>
void operator|(void (*kernel)(Parameters...), const BoundLaunch<Arguments...>& bound) {
  run_bound(kernel, bound);
}

// A kernel template whose last template arguments nvcc deduces from the launch's arguments
// (softmax_forward_kernel<Threads, true><<<...>>>(x, y, ...)): the kernel's parameter types are taken
// from the arguments (the first parameter does not take part in deduction), which then pick the
// specialisation. That needs the arguments to have exactly the parameters' types; where they do not
// (a T* for a const T*), the launch names all template arguments and the overload above serves.
template <class... Arguments>
void operator|(std::type_identity_t<void (*)(Arguments...)> kernel, const BoundLaunch<Arguments...>& bound) {
  run_bound(kernel, bound);
}

}  // namespace agf::emulator
