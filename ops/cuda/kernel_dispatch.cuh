#pragma once
// Element-type dispatch for the op kernels (nvcc only): the floating types, or the index types. The host
// op has already refused other dtypes with a clear error, so reaching `default` is a programming error.
#include <cstdint>
#include <cstdlib>

#include "core/element_type.h"

namespace agf::cuda {

// Calls body.template operator()<T>() with T one of double, float, Half, BFloat16 (agf types; device_t<T>
// is the type in memory).
template <class Body>
void dispatch_floating_kernel(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::f64: return body.template operator()<double>();
    case DType::f32: return body.template operator()<float>();
    case DType::f16: return body.template operator()<Half>();
    case DType::bf16: return body.template operator()<BFloat16>();
    default: std::abort();
  }
}

// Calls body.template operator()<I>() with I = int32_t or int64_t.
template <class Body>
void dispatch_index_kernel(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::i32: return body.template operator()<int32_t>();
    case DType::i64: return body.template operator()<int64_t>();
    default: std::abort();
  }
}

}  // namespace agf::cuda
