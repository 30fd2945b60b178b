#pragma once
// Element-type dispatch inside .cu files (which cannot include core/dtype.h's fmt-based errors). The
// host op layer has already checked the dtype, so an unexpected one here is a programming error.
#include <cstdlib>

#include "core/element_type.h"

namespace agf::cuda {

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

}  // namespace agf::cuda
