#include "core/shape.h"

#include <algorithm>

#include "core/error.h"

namespace agf {

int64_t shape_numel(const Shape& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    AGF_CHECK(!__builtin_mul_overflow(count, extent, &count), "shape {}: the element count does not fit in 64 bits",
              shape_string(shape));
  }
  return count;
}

std::size_t shape_bytes(const Shape& shape, std::size_t element_size) {
  const int64_t count = shape_numel(shape);
  AGF_CHECK(count >= 0, "shape {}: a negative extent", shape_string(shape));
  std::size_t bytes = 0;
  AGF_CHECK(!__builtin_mul_overflow(static_cast<std::size_t>(count), element_size, &bytes),
            "shape {}: {} elements of {} bytes do not fit in 64 bits", shape_string(shape), count, element_size);
  return bytes;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    strides[axis] = stride;
    stride *= std::max<int64_t>(shape[axis], 1);
  }
  return strides;
}

std::string shape_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

int64_t normalize_axis(int64_t axis, int64_t rank, const char* op) {
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  AGF_CHECK(normalized >= 0 && normalized < rank, "{}: axis {} is out of range for a tensor of rank {}", op, axis,
            rank);
  return normalized;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const int64_t extent_a = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t extent_b = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    AGF_CHECK(extent_a == extent_b || extent_a == 1 || extent_b == 1,
              "{}: shapes {} and {} cannot be broadcast together (axis {}: {} vs {})", op, shape_string(a),
              shape_string(b), i, extent_a, extent_b);
    result[i] = extent_a == 1 ? extent_b : extent_a;
  }
  return result;
}

}  // namespace agf
