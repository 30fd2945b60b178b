#pragma once
// Shapes and strides (in elements, not bytes), and the broadcasting rule of NumPy.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace agf {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// The element count; throws agf::Error when it overflows int64 (shapes read from files can be anything).
int64_t shape_numel(const Shape& shape);
// The element count times `element_size`, in bytes; throws agf::Error when it overflows.
std::size_t shape_bytes(const Shape& shape, std::size_t element_size);
Strides contiguous_strides(const Shape& shape);  // row-major: last axis has stride 1
std::string shape_string(const Shape& shape);    // "[2, 3, 4]"

// Maps a possibly negative axis into [0, rank); `op` names the caller in the error.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* op);

// NumPy broadcasting: align shapes on the right; each axis must match or be 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace agf
