#pragma once
// Element types a Tensor can hold, and the compile-time mapping between DType and C++ types.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/element_type.h"
#include "core/error.h"

namespace agf {

// Parses "f32", "float32", "bf16", ... (the names agf prints).
DType parse_dtype(std::string_view name);

// Converting any element type to and from double (the widest common type) for generic code.
// clang-format off
template <class T> inline double to_double(T value) { return static_cast<double>(value); }
template <> inline double to_double(Half value) { return static_cast<float>(value); }
template <> inline double to_double(BFloat16 value) { return static_cast<float>(value); }
template <class T> inline T from_double(double value) { return static_cast<T>(value); }
template <> inline Half from_double(double value) { return Half(static_cast<float>(value)); }
template <> inline BFloat16 from_double(double value) { return BFloat16(static_cast<float>(value)); }
// clang-format on

// Calls `body.template operator()<T>()` with T the C++ type of `dtype`. Use with a templated lambda:
//   dispatch_all(t.dtype(), [&]<class T>() { ... });
template <class Body>
decltype(auto) dispatch_all(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::f64: return body.template operator()<double>();
    case DType::f32: return body.template operator()<float>();
    case DType::f16: return body.template operator()<Half>();
    case DType::bf16: return body.template operator()<BFloat16>();
    case DType::i32: return body.template operator()<int32_t>();
    case DType::i64: return body.template operator()<int64_t>();
  }
  fail("unknown dtype {}", static_cast<int>(dtype));
}

// The CPU kernels compute in f32 and f64; `op` names the caller in the error for any other dtype.
template <class Body>
decltype(auto) dispatch_floating(DType dtype, std::string_view op, Body&& body) {
  switch (dtype) {
    case DType::f64: return body.template operator()<double>();
    case DType::f32: return body.template operator()<float>();
    default:
      fail("{}: dtype {} is not supported on CPU (f32 and f64 are; convert with .to(DType::f32))", op,
           dtype_name(dtype));
  }
}

// The CUDA kernels take every floating dtype (half types compute in f32); `op` names the caller.
template <class Body>
decltype(auto) dispatch_any_floating(DType dtype, std::string_view op, Body&& body) {
  switch (dtype) {
    case DType::f64: return body.template operator()<double>();
    case DType::f32: return body.template operator()<float>();
    case DType::f16: return body.template operator()<Half>();
    case DType::bf16: return body.template operator()<BFloat16>();
    default: fail("{}: dtype {} is not a floating type", op, dtype_name(dtype));
  }
}

template <class Body>
decltype(auto) dispatch_index(DType dtype, std::string_view op, Body&& body) {
  switch (dtype) {
    case DType::i64: return body.template operator()<int64_t>();
    case DType::i32: return body.template operator()<int32_t>();
    default: fail("{}: indices must be i32 or i64, got {}", op, dtype_name(dtype));
  }
}

}  // namespace agf
