#pragma once
// The kernels behind Tensor's own methods on CUDA tensors: copy with cast and any strides (contiguous,
// clone, to(DType), copy_from) and fill. Raw pointers and StridedIndex in, work queued on the device's stream.
#include <cstdint>

#include "core/cuda/strided_index.h"
#include "core/element_type.h"

namespace agf::cuda {

// out[offset_0(i)] = convert(in[offset_1(i)]) for i in [0, count), offsets from `index` (operand 0 = out).
void copy_elements(DType out_dtype, void* out, DType in_dtype, const void* in, const StridedIndex<2>& index,
                   int64_t count, int device);

// out[offset(i)] = value for i in [0, count).
void fill_elements(DType dtype, void* out, const StridedIndex<1>& index, int64_t count, double value, int device);

}  // namespace agf::cuda
