#include "ops/device_route.h"

namespace agf::ops::detail {

bool any_on_cuda(const char* op, std::initializer_list<const Tensor*> tensors) {
  const Tensor* first = nullptr;
  for (const Tensor* tensor : tensors) {
    if (!tensor->defined()) continue;
    if (first == nullptr) {
      first = tensor;
      continue;
    }
    AGF_CHECK(tensor->device() == first->device(),
              "{}: tensors on different devices ({} and {}); move one with .to(Device)", op, first->description(),
              tensor->description());
  }
  return first != nullptr && first->device().is_cuda();
}

}  // namespace agf::ops::detail
