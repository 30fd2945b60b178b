// Embedding gather and scatter-add on a GPU (see embedding_kernels.h). Both walk the count·features
// output (or gradient) elements with a grid-stride loop: element e is feature f = e mod features of
// position i = ⌊e / features⌋, so consecutive threads touch consecutive features of one row (coalesced).
#include <cstdint>

#include "core/cuda/device_types.h"
#include "core/cuda/dispatch.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/embedding_kernels.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;

// Word: an unsigned integer of the element's size; the gather copies bits and never converts.
// An id outside [0, rows) reads a zero row: the deferred check reports it (ops/cuda/id_check.h).
template <class Word, class I>
__global__ void gather_kernel(const Word* table, const I* ids, Word* out, int64_t count, int64_t features,
                              int64_t rows) {
  const int64_t total = count * features;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / features, f = e - i * features;
    const int64_t id = static_cast<int64_t>(ids[i]);
    out[e] = id >= 0 && id < rows ? table[id * features + f] : Word(0);
  }
}

// An id outside [0, rows) adds nothing: the deferred check reports it.
template <class G, class I>
__global__ void scatter_add_kernel(const G* grad, const I* ids, acc_t<G>* table, int64_t count, int64_t features,
                                   int64_t rows) {
  const int64_t total = count * features;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / features, f = e - i * features;
    const int64_t id = static_cast<int64_t>(ids[i]);
    if (id >= 0 && id < rows) atomicAdd(&table[id * features + f], to_acc(grad[e]));
  }
}

template <class Word>
void launch_gather(const void* table, int64_t rows, DType id_dtype, const void* ids, void* out, int64_t count,
                   int64_t features, cudaStream_t stream) {
  dispatch_index_kernel(id_dtype, [&]<class I>() {
    gather_kernel<<<blocks_for(count * features, kThreads), kThreads, 0, stream>>>(
        static_cast<const Word*>(table), static_cast<const I*>(ids), static_cast<Word*>(out), count, features, rows);
    AGF_CUDA_CHECK_LAUNCH(gather_kernel);
  });
}

}  // namespace

void embedding_gather(DType dtype, const void* table, int64_t rows, DType id_dtype, const void* ids, void* out,
                      int64_t count, int64_t features, int device) {
  if (count == 0 || features == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  switch (dtype_size(dtype)) {
    case 2: return launch_gather<uint16_t>(table, rows, id_dtype, ids, out, count, features, stream);
    case 4: return launch_gather<uint32_t>(table, rows, id_dtype, ids, out, count, features, stream);
    default: return launch_gather<uint64_t>(table, rows, id_dtype, ids, out, count, features, stream);
  }
}

void embedding_scatter_add(DType grad_dtype, const void* grad, DType id_dtype, const void* ids, void* table,
                           int64_t rows, int64_t count, int64_t features, int device) {
  if (count == 0 || features == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  dispatch_floating_kernel(grad_dtype, [&]<class Element>() {
    using G = device_t<Element>;
    dispatch_index_kernel(id_dtype, [&]<class I>() {
      scatter_add_kernel<<<blocks_for(count * features, kThreads), kThreads, 0, stream>>>(static_cast<const G*>(grad),
                                                                                          static_cast<const I*>(ids),
                                                                                          static_cast<acc_t<G>*>(table),
                                                                                          count, features, rows);
      AGF_CUDA_CHECK_LAUNCH(scatter_add_kernel);
    });
  });
}

}  // namespace agf::cuda
