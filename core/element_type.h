#pragma once
// DType, the element types a Tensor can hold, and their C++ types — without the dispatch helpers of
// core/dtype.h, so nvcc-compiled kernels can include it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/half.h"

namespace agf {

enum class DType : uint8_t { f64, f32, f16, bf16, i32, i64 };

constexpr std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
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

// clang-format off
template <class T> struct dtype_of;
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::i64; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;
// clang-format on

}  // namespace agf
