#pragma once
// A process-wide choice that scoped objects override while they live: the CPU's bf16 kernel
// (ops::cpu::ForceBf16Kernel) and its f32 GEMM library (ops::cpu::ForceGemmLibrary), which the tests and
// `agf bench` set to something other than the processor's best.
//
// Any number of overrides may live at once, on any thread, if they name the same value (a second naming another
// is an error: two tests forcing different kernels at once would each measure the other's). `forced()` is read
// on every product, so it takes no lock: the value is stored before the count that publishes it.
#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "core/error.h"

namespace agf {

template <class Choice>
class ForcedChoice {
 public:
  // The value a living override names; nullopt when none lives.
  std::optional<Choice> forced() const {
    if (count_.load() == 0) return std::nullopt;
    return value_.load();
  }

  // One more override of `value`; `what` ("the bf16 kernel") and `name` (a value's name) word the error when
  // another value is forced already.
  template <class NameOf>
  void begin(Choice value, const std::string& what, NameOf name) {
    const std::lock_guard lock(mutex_);
    AGF_CHECK(count_.load() == 0 || value_.load() == value, "{} '{}' is forced while '{}' already is", what,
              name(value), name(value_.load()));
    value_.store(value);
    count_.fetch_add(1);
  }

  // One override fewer (each begin has one end).
  void end() {
    const std::lock_guard lock(mutex_);
    count_.fetch_sub(1);
  }

 private:
  std::mutex mutex_;  // orders begin's check-and-store against the others
  std::atomic<Choice> value_{};
  std::atomic<int> count_{0};
};

}  // namespace agf
