#pragma once
// Element-type dispatch inside .cu files (which cannot include core/dtype.h's fmt-based errors). Each
// calls body.template operator()<T>() with T the agf type of `dtype` (device_t<T> is the type in memory).
// The host op has already refused other dtypes with an error naming the op, so reaching the end of a
// switch is a programming error.
#include <cstdint>
#include <cstdlib>

#include "core/element_type.h"

namespace agf::cuda {

// Any element type: double, float, Half, BFloat16, int32_t, int64_t.
template <class Body>
void dispatch_element_type(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::f64: return body.template operator()<double>();
    case DType::f32: return body.template operator()<float>();
    case DType::f16: return body.template operator()<Half>();
    case DType::bf16: return body.template operator()<BFloat16>();
    case DType::i32: return body.template operator()<int32_t>();
    case DType::i64: return body.template operator()<int64_t>();
  }
  std::abort();
}

// The floating types: double, float, Half, BFloat16.
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

// The index types: int32_t, int64_t.
template <class Body>
void dispatch_index_kernel(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::i32: return body.template operator()<int32_t>();
    case DType::i64: return body.template operator()<int64_t>();
    default: std::abort();
  }
}

}  // namespace agf::cuda
