#include "core/tensor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/strided_loop.h"
#ifdef AGF_WITH_CUDA
#include "core/cuda/tensor_transfer.h"
#endif

namespace agf {

// ---- construction ----------------------------------------------------------------------------------

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Device device, Shape shape, Strides strides,
               int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      device_(device),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      numel_(shape_numel(shape_)) {}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t extent : shape) {
    AGF_CHECK(extent >= 0, "Tensor::empty: negative extent in shape {}", shape_string(shape));
  }
  auto storage = std::make_shared<Storage>(shape_bytes(shape, dtype_size(dtype)), device);
  return Tensor(std::move(storage), dtype, device, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor result = empty(shape, dtype, device);
  result.fill(value);
  return result;
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor Tensor::ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }
Tensor Tensor::scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor Tensor::arange(int64_t count, DType dtype) {
  Tensor result = empty({count}, dtype);
  dispatch_all(dtype, [&]<class T>() {
    T* out = result.data<T>();
    for (int64_t i = 0; i < count; ++i) out[i] = from_double<T>(static_cast<double>(i));
  });
  return result;
}

namespace {
// Copies row-major `values` of any arithmetic type into a new tensor of `shape` and `dtype`.
template <class Value>
Tensor tensor_from_values(const std::vector<Value>& values, const Shape& shape, DType dtype) {
  AGF_CHECK(static_cast<int64_t>(values.size()) == shape_numel(shape),
            "Tensor::from_vector: {} values do not fill shape {}", values.size(), shape_string(shape));
  Tensor result = Tensor::empty(shape, dtype);
  dispatch_all(dtype, [&]<class T>() {
    T* out = result.data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = from_double<T>(static_cast<double>(values[i]));
  });
  return result;
}
}  // namespace

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  return tensor_from_values(values, shape, dtype);
}

Tensor Tensor::from_vector(const std::vector<int64_t>& values, const Shape& shape, DType dtype) {
  return tensor_from_values(values, shape, dtype);
}

// ---- metadata ---------------------------------------------------------------------------------------

int64_t Tensor::size(int64_t axis) const { return shape_[normalize_axis(axis, dim(), "Tensor::size")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (std::size_t axis = shape_.size(); axis-- > 0;) {
    if (shape_[axis] == 1) continue;  // the stride of a unit axis never matters
    if (strides_[axis] != expected) return false;
    expected *= shape_[axis];
  }
  return true;
}

std::string Tensor::description() const {
  if (!defined()) return "undefined tensor";
  return fmt::format("{}{} on {}", dtype_name(dtype_), shape_string(shape_), device_.name());
}

void* Tensor::raw_data() const {
  AGF_CHECK(defined(), "data access on an undefined tensor");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

void check_defined(const Tensor& tensor, const char* op, const char* argument) {
  AGF_CHECK(tensor.defined(), "{}: argument '{}' is an undefined tensor", op, argument);
}
void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  AGF_CHECK(a.device() == b.device(), "{}: tensors on different devices ({} and {}); move one with .to(Device)", op,
            a.description(), b.description());
}
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  AGF_CHECK(a.dtype() == b.dtype(), "{}: dtype mismatch ({} and {})", op, a.description(), b.description());
}
void check_cpu(const Tensor& tensor, const char* op) {
  AGF_CHECK(tensor.device().is_cpu(), "{}: {} must be on the CPU here", op, tensor.description());
}

// ---- values -----------------------------------------------------------------------------------------

double Tensor::item() const {
  AGF_CHECK(numel_ == 1, "Tensor::item: tensor {} has {} elements, not 1", description(), numel_);
  return to_double_vector()[0];
}

std::vector<double> Tensor::to_double_vector() const {
  const Tensor source = (device_.is_cuda() ? to(Device::cpu()) : *this).contiguous();
  std::vector<double> values(static_cast<std::size_t>(numel_));
  dispatch_all(dtype_, [&]<class T>() {
    const T* in = source.data<T>();
    for (int64_t i = 0; i < numel_; ++i) values[i] = to_double(in[i]);
  });
  return values;
}

std::vector<int64_t> Tensor::to_int_vector() const {
  const std::vector<double> values = to_double_vector();
  return std::vector<int64_t>(values.begin(), values.end());
}

// ---- copies -----------------------------------------------------------------------------------------

void Tensor::copy_from(const Tensor& source) {
  check_defined(source, "Tensor::copy_from", "source");
#ifdef AGF_WITH_CUDA
  if (device_.is_cuda()) return cuda::copy_into(*this, source.to(device_));
#endif
  check_cpu(*this, "Tensor::copy_from");
  const Tensor from = (source.device().is_cuda() ? source.to(Device::cpu()) : source).expand(shape_);
  const Strides& out_strides = strides_;
  const Strides& in_strides = from.strides_;
  dispatch_all(dtype_, [&]<class Out>() {
    Out* out = data<Out>();
    dispatch_all(from.dtype_, [&]<class In>() {
      const In* in = from.data<In>();
      for_each_strided<2>(shape_, {&out_strides, &in_strides}, [&](const std::array<int64_t, 2>& at) {
        if constexpr (std::is_same_v<In, Out>) {
          out[at[0]] = in[at[1]];
        } else {
          out[at[0]] = from_double<Out>(to_double(in[at[1]]));
        }
      });
    });
  });
}

void Tensor::fill(double value) {
#ifdef AGF_WITH_CUDA
  if (device_.is_cuda()) return cuda::fill(*this, value);
#endif
  check_cpu(*this, "Tensor::fill");
  dispatch_all(dtype_, [&]<class T>() {
    const T typed = from_double<T>(value);
    T* out = data<T>();
    for_each_strided<1>(shape_, {&strides_}, [&](const std::array<int64_t, 1>& at) { out[at[0]] = typed; });
  });
}

Tensor Tensor::contiguous() const {
  if (!defined() || is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor result = empty(shape_, dtype_, device_);
  result.copy_from(*this);
  return result;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor result = empty(shape_, dtype, device_);
  result.copy_from(*this);
  return result;
}

Tensor Tensor::to(Device device) const {
  if (device == device_) return *this;
  AGF_CHECK(defined(), "Tensor::to({}): the tensor is undefined", device.name());
  if (device.is_cpu() && device_.is_cpu()) {  // host memory under another label (Device::cpu(N)): a copy
    Tensor result = empty(shape_, dtype_, device);
    result.copy_from(*this);
    return result;
  }
#ifdef AGF_WITH_CUDA
  if (device.is_cuda()) {
    const int count = cuda_device_count();
    AGF_CHECK(device.index >= 0 && device.index < count, "Tensor::to({}): {}", device.name(),
              count == 0 ? cuda_unavailable_reason() : fmt::format("there are {} CUDA devices", count));
  }
  return cuda::transfer(*this, device);
#else
  fail("Tensor::to({}): cannot move {}: {}", device.name(), description(), cuda_unavailable_reason());
#endif
}

// ---- views ------------------------------------------------------------------------------------------

Tensor Tensor::as_strided(const Shape& shape, const Strides& strides, int64_t offset) const {
  AGF_CHECK(shape.size() == strides.size(), "as_strided: shape {} and strides {} differ in rank", shape_string(shape),
            shape_string(strides));
  int64_t lowest = offset, highest = offset;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] == 0) {
      lowest = offset;
      highest = offset - 1;
      break;
    }
    const int64_t reach = (shape[axis] - 1) * strides[axis];
    (reach < 0 ? lowest : highest) += reach;
  }
  const int64_t capacity = static_cast<int64_t>(storage_->bytes() / dtype_size(dtype_));
  AGF_CHECK(lowest >= 0 && (highest < capacity || highest < lowest),
            "as_strided: view {} strides {} offset {} reaches outside storage of {} elements", shape_string(shape),
            shape_string(strides), offset, capacity);
  return Tensor(storage_, dtype_, device_, shape, strides, offset);
}

Tensor Tensor::view(const Shape& requested) const {
  Shape shape = requested;
  // resolve one -1
  int64_t known = 1, unknown_axis = -1;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] == -1) {
      AGF_CHECK(unknown_axis < 0, "reshape: more than one -1 in {}", shape_string(requested));
      unknown_axis = static_cast<int64_t>(axis);
    } else {
      AGF_CHECK(shape[axis] >= 0, "reshape: negative extent in {}", shape_string(requested));
      known *= shape[axis];
    }
  }
  if (unknown_axis >= 0) {
    AGF_CHECK(known > 0 && numel_ % known == 0, "reshape: cannot infer -1 in {} for {} elements",
              shape_string(requested), numel_);
    shape[unknown_axis] = numel_ / known;
  }
  AGF_CHECK(shape_numel(shape) == numel_, "reshape: cannot view {} ({} elements) as {} ({} elements)", description(),
            numel_, shape_string(shape), shape_numel(shape));
  if (is_contiguous()) return Tensor(storage_, dtype_, device_, shape, contiguous_strides(shape), offset_);
  // Non-contiguous: a view exists when each new axis lies within one run of old axes that are
  // themselves laid out contiguously relative to each other (the rule PyTorch's view follows).
  Strides strides(shape.size());
  std::size_t old_axis = 0, new_axis = 0;
  const std::size_t old_rank = shape_.size(), new_rank = shape.size();
  while (new_axis < new_rank || old_axis < old_rank) {
    // skip unit axes
    if (new_axis < new_rank && shape[new_axis] == 1) {
      strides[new_axis++] = 1;
      continue;
    }
    if (old_axis < old_rank && shape_[old_axis] == 1) {
      ++old_axis;
      continue;
    }
    if (new_axis >= new_rank || old_axis >= old_rank) break;
    // gather a run of old axes [old_axis, old_end) and new axes [new_axis, new_end) of equal product
    int64_t old_product = shape_[old_axis], new_product = shape[new_axis];
    std::size_t old_end = old_axis + 1, new_end = new_axis + 1;
    std::size_t innermost = old_axis;  // last non-unit old axis of the run
    while (old_product != new_product) {
      AGF_CHECK(old_end < old_rank || new_end < new_rank,
                "view: {} cannot be viewed as {} without a copy (use reshape)", description(), shape_string(shape));
      if (old_product < new_product && old_end < old_rank) {
        if (shape_[old_end] != 1) {
          AGF_CHECK(strides_[innermost] == strides_[old_end] * shape_[old_end],
                    "view: {} with strides {} cannot be viewed as {} without a copy (use reshape)", description(),
                    shape_string(strides_), shape_string(shape));
          innermost = old_end;
        }
        old_product *= shape_[old_end++];
      } else {
        new_product *= shape[new_end++];
      }
    }
    // the run's innermost stride, then assign new strides right to left
    int64_t stride = strides_[innermost];
    for (std::size_t axis = new_end; axis-- > new_axis;) {
      strides[axis] = stride;
      stride *= shape[axis];
    }
    old_axis = old_end;
    new_axis = new_end;
  }
  return Tensor(storage_, dtype_, device_, shape, strides, offset_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  try {
    return view(shape);
  } catch (const Error&) {
    return contiguous().view(shape);
  }
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  AGF_CHECK(static_cast<int64_t>(order.size()) == dim(), "permute: order [{}] does not match rank of {}",
            fmt::join(order, ", "), description());
  Shape shape(order.size());
  Strides strides(order.size());
  std::vector<bool> seen(order.size(), false);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const int64_t axis = normalize_axis(order[i], dim(), "permute");
    AGF_CHECK(!seen[axis], "permute: axis {} repeated in [{}]", axis, fmt::join(order, ", "));
    seen[axis] = true;
    shape[i] = shape_[axis];
    strides[i] = strides_[axis];
  }
  return Tensor(storage_, dtype_, device_, shape, strides, offset_);
}

Tensor Tensor::transpose(int64_t axis_a, int64_t axis_b) const {
  std::vector<int64_t> order(shape_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::swap(order[normalize_axis(axis_a, dim(), "transpose")], order[normalize_axis(axis_b, dim(), "transpose")]);
  return permute(order);
}

Tensor Tensor::slice(int64_t axis, int64_t start, int64_t stop, int64_t step) const {
  axis = normalize_axis(axis, dim(), "slice");
  const int64_t extent = shape_[axis];
  AGF_CHECK(step > 0, "slice: step must be positive, got {}", step);
  if (start < 0) start += extent;
  if (stop < 0) stop += extent;
  start = std::clamp<int64_t>(start, 0, extent);
  stop = std::clamp<int64_t>(stop, start, extent);
  Shape shape = shape_;
  Strides strides = strides_;
  shape[axis] = (stop - start + step - 1) / step;
  strides[axis] = strides_[axis] * step;
  return Tensor(storage_, dtype_, device_, shape, strides, offset_ + start * strides_[axis]);
}

Tensor Tensor::select(int64_t axis, int64_t index) const {
  axis = normalize_axis(axis, dim(), "select");
  AGF_CHECK(index >= -shape_[axis] && index < shape_[axis], "select: index {} out of range for axis {} of {}", index,
            axis, description());
  if (index < 0) index += shape_[axis];
  return slice(axis, index, index + 1).squeeze(axis);
}

Tensor Tensor::expand(const Shape& shape) const {
  AGF_CHECK(shape.size() >= shape_.size(), "expand: cannot expand {} to fewer axes {}", description(),
            shape_string(shape));
  const std::size_t lead = shape.size() - shape_.size();
  Strides strides(shape.size(), 0);
  for (std::size_t axis = 0; axis < shape_.size(); ++axis) {
    const int64_t target = shape[lead + axis];
    if (shape_[axis] == target) {
      strides[lead + axis] = strides_[axis];
    } else {
      AGF_CHECK(shape_[axis] == 1, "expand: cannot expand {} to {} (axis {}: {} vs {})", description(),
                shape_string(shape), axis, shape_[axis], target);
    }
  }
  return Tensor(storage_, dtype_, device_, shape, strides, offset_);
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  axis = normalize_axis(axis, dim() + 1, "unsqueeze");
  Shape shape = shape_;
  Strides strides = strides_;
  const int64_t stride = axis < dim() ? strides_[axis] * shape_[axis] : 1;
  shape.insert(shape.begin() + axis, 1);
  strides.insert(strides.begin() + axis, stride);
  return Tensor(storage_, dtype_, device_, shape, strides, offset_);
}

Tensor Tensor::squeeze(int64_t axis) const {
  axis = normalize_axis(axis, dim(), "squeeze");
  AGF_CHECK(shape_[axis] == 1, "squeeze: axis {} of {} has extent {}, not 1", axis, description(), shape_[axis]);
  Shape shape = shape_;
  Strides strides = strides_;
  shape.erase(shape.begin() + axis);
  strides.erase(strides.begin() + axis);
  return Tensor(storage_, dtype_, device_, shape, strides, offset_);
}

// ---- printing ---------------------------------------------------------------------------------------

std::string Tensor::to_string(int64_t max_elements) const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream out;
  out << "Tensor(" << description() << ", [";
  const std::vector<double> values = to_double_vector();
  const int64_t shown = std::min<int64_t>(numel_, max_elements);
  for (int64_t i = 0; i < shown; ++i) out << (i ? ", " : "") << values[i];
  if (shown < numel_) out << ", ... (" << numel_ - shown << " more)";
  out << "])";
  return out.str();
}

std::ostream& operator<<(std::ostream& stream, const Tensor& tensor) { return stream << tensor.to_string(); }

DType parse_dtype(std::string_view name) {
  if (name == "f64" || name == "float64" || name == "double") return DType::f64;
  if (name == "f32" || name == "float32" || name == "float" || name == "fp32") return DType::f32;
  if (name == "f16" || name == "float16" || name == "half" || name == "fp16") return DType::f16;
  if (name == "bf16" || name == "bfloat16") return DType::bf16;
  if (name == "i32" || name == "int32") return DType::i32;
  if (name == "i64" || name == "int64") return DType::i64;
  fail("unknown dtype '{}' (expected f64, f32, f16, bf16, i32 or i64)", name);
}

}  // namespace agf
