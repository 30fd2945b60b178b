#pragma once
// Element types a Tensor can hold, and the compile-time mapping between DType and C++ types.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "core/half.h"

namespace agf {

enum class DType : uint8_t { f64, f32, f16, bf16, i32, i64 };

constexpr std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
  }
  return "?";
}

constexpr bool is_floating(DType dtype) { return dtype != DType::i32 && dtype != DType::i64; }
constexpr bool is_integer(DType dtype) { return !is_floating(dtype); }

// Parses "f32", "float32", "bf16", ... (the names agf prints).
DType parse_dtype(std::string_view name);

template <class T> struct dtype_of;
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::i64; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

// Converting any element type to and from double (the widest common type) for generic code.
template <class T> inline double to_double(T value) { return static_cast<double>(value); }
template <> inline double to_double(Half value) { return static_cast<float>(value); }
template <> inline double to_double(BFloat16 value) { return static_cast<float>(value); }
template <class T> inline T from_double(double value) { return static_cast<T>(value); }
template <> inline Half from_double(double value) { return Half(static_cast<float>(value)); }
template <> inline BFloat16 from_double(double value) { return BFloat16(static_cast<float>(value)); }

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

template <class Body>
decltype(auto) dispatch_index(DType dtype, std::string_view op, Body&& body) {
  switch (dtype) {
    case DType::i64: return body.template operator()<int64_t>();
    case DType::i32: return body.template operator()<int32_t>();
    default: fail("{}: indices must be i32 or i64, got {}", op, dtype_name(dtype));
  }
}

}  // namespace agf
