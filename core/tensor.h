#pragma once
// Tensor: a typed, strided view of shared Storage on one Device.
//
// A tensor is (storage, offset, shape, strides, dtype). Views — reshape of contiguous data, permute,
// transpose, slice, expand, squeeze/unsqueeze — share the storage and copy nothing; `contiguous()`
// copies only when the layout is not already row-major. Copying a Tensor object is cheap and aliases.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace agf {

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (defined() == false), e.g. "no gradient"

  // ---- factories ----
  static Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor ones(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor scalar(double value, DType dtype = DType::f32);   // rank 0
  static Tensor arange(int64_t count, DType dtype = DType::f32);  // 0, 1, ..., count-1
  // Copies `values` (row-major) into a new CPU tensor of `shape`, converted to `dtype`.
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype = DType::f32);
  static Tensor from_vector(const std::vector<int64_t>& values, const Shape& shape, DType dtype = DType::i64);

  // ---- metadata ----
  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t axis) const;  // negative axes count from the end
  int64_t numel() const { return numel_; }
  bool is_contiguous() const;
  std::string description() const;  // "f32[2, 3] on cpu"

  // ---- element access (CPU) ----
  // Pointer to the first element; T must match dtype() (checked).
  template <class T>
  T* data() const;
  void* raw_data() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  double item() const;                           // the value of a one-element tensor
  std::vector<double> to_double_vector() const;  // row-major values, any dtype
  std::vector<int64_t> to_int_vector() const;

  // ---- copies and conversion ----
  Tensor contiguous() const;  // itself when already contiguous
  Tensor clone() const;       // always a fresh contiguous copy
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  void copy_from(const Tensor& source);  // same shape (or broadcastable to this), any dtype
  void fill(double value);

  // ---- views ----
  Tensor view(const Shape& shape) const;     // no copy; error when the layout does not allow it
  Tensor reshape(const Shape& shape) const;  // view when possible, else a contiguous copy; one -1 allowed
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor transpose(int64_t axis_a, int64_t axis_b) const;
  Tensor slice(int64_t axis, int64_t start, int64_t stop, int64_t step = 1) const;  // [start, stop)
  Tensor select(int64_t axis, int64_t index) const;  // slice of width 1 with the axis removed
  Tensor expand(const Shape& shape) const;           // broadcast view: stride 0 on expanded axes
  Tensor unsqueeze(int64_t axis) const;
  Tensor squeeze(int64_t axis) const;
  Tensor flatten() const { return reshape({numel_}); }

  std::string to_string(int64_t max_elements = 64) const;

  // Low-level: a view with explicit geometry over the same storage (bounds-checked).
  Tensor as_strided(const Shape& shape, const Strides& strides, int64_t offset) const;

 private:
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Device device, Shape shape, Strides strides, int64_t offset);

  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::f32;
  Device device_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 0;
};

std::ostream& operator<<(std::ostream& stream, const Tensor& tensor);

template <class T>
T* Tensor::data() const {
  AGF_CHECK(dtype_v<T> == dtype_, "Tensor::data<{}>() on a tensor of dtype {}", dtype_name(dtype_v<T>),
            dtype_name(dtype_));
  return static_cast<T*>(raw_data());
}

// Checks shared by every op: defined, on the same device, of the same dtype.
void check_defined(const Tensor& tensor, const char* op, const char* argument);
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);
void check_cpu(const Tensor& tensor, const char* op);

}  // namespace agf
