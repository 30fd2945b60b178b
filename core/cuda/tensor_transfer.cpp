// Moving tensors between the host and GPUs, and Tensor's copy/fill on a GPU (see tensor_transfer.h).
#include "core/cuda/tensor_transfer.h"

#include "core/cuda/deferred_check.h"
#include "core/cuda/runtime.h"
#include "core/cuda/strided_index_host.h"
#include "core/cuda/tensor_kernels.h"

namespace agf::cuda {

Tensor transfer(const Tensor& source, Device device) {
  const std::size_t bytes = static_cast<std::size_t>(source.numel()) * dtype_size(source.dtype());
  if (device.is_cuda() && source.device().is_cpu()) {
    const Tensor host = source.contiguous();
    Tensor result = Tensor::empty(source.shape(), source.dtype(), device);
    if (bytes == 0) return result;
    DeviceGuard guard(device.index);
    // From pageable memory the call returns once the bytes are staged, so `host` may be freed after it.
    AGF_CUDA_CHECK(cudaMemcpyAsync(result.raw_data(), host.raw_data(), bytes, cudaMemcpyHostToDevice,
                                   current_stream(device.index)));
    return result;
  }
  const Tensor packed = source.contiguous();  // on its GPU
  Tensor result = Tensor::empty(source.shape(), source.dtype(), device);
  if (bytes == 0) return result;
  const int from = source.device().index;
  if (device.is_cpu()) {
    DeviceGuard guard(from);
    AGF_CUDA_CHECK(
        cudaMemcpyAsync(result.raw_data(), packed.raw_data(), bytes, cudaMemcpyDeviceToHost, current_stream(from)));
    read_deferred_record(from);  // the deferred checks' verdict comes back in the same wait
    AGF_CUDA_CHECK(cudaStreamSynchronize(current_stream(from)));
    raise_deferred_errors(from);
    return result;
  }
  // GPU to GPU, on agf's streams (cudaMemcpyPeer would run on the legacy default stream, which agf's
  // non-blocking streams are not ordered with): wait for the source's queued work, which produces
  // `packed`; copy on the target's stream, after the queued work that may still use the recycled block
  // `result` and before any later work that reads it; wait for the copy, so that `packed` (possibly a
  // temporary) is not handed out again on the source's stream while the copy still reads it.
  synchronize(from);
  DeviceGuard guard(device.index);
  const cudaStream_t target = current_stream(device.index);
  AGF_CUDA_CHECK(cudaMemcpyPeerAsync(result.raw_data(), device.index, packed.raw_data(), from, bytes, target));
  AGF_CUDA_CHECK(cudaStreamSynchronize(target));
  return result;
}

void copy_into(const Tensor& out, const Tensor& source) {
  check_same_device(out, source, "Tensor::copy_from");
  const Tensor from = source.expand(out.shape());
  const StridedIndex<2> index = make_strided_index<2>(out.shape(), {&out.strides(), &from.strides()},
                                                      "Tensor::copy_from");
  copy_elements(out.dtype(), out.raw_data(), from.dtype(), from.raw_data(), index, out.numel(), out.device().index);
}

void fill(const Tensor& out, double value) {
  const StridedIndex<1> index = make_strided_index<1>(out.shape(), {&out.strides()}, "Tensor::fill");
  fill_elements(out.dtype(), out.raw_data(), index, out.numel(), value, out.device().index);
}

}  // namespace agf::cuda
