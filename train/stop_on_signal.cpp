#include "train/stop_on_signal.h"

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace agf::train {

namespace {

std::atomic<int> stop_signal{0};
extern "C" void request_stop(int signal) { stop_signal = signal; }

// Room for the signal frame with the largest XSAVE area (AMX tile data alone is 8 KiB) and the handler, which
// only stores an int.
constexpr std::size_t kStackBytes = 256 * 1024;

}  // namespace

StopOnSignal::StopOnSignal() : stack_(new char[kStackBytes]) {
  stop_signal = 0;
  stack_t stack{};
  stack.ss_sp = stack_.get();
  stack.ss_size = kStackBytes;
  AGF_CHECK(sigaltstack(&stack, &previous_stack_) == 0, "train: sigaltstack failed: {}", std::strerror(errno));
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_ONSTACK | SA_RESTART;
  sigaction(SIGINT, &action, &previous_int_);
  sigaction(SIGTERM, &action, &previous_term_);
  sigaction(SIGUSR1, &action, &previous_usr1_);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
  sigaction(SIGUSR1, &previous_usr1_, nullptr);
  sigaltstack(&previous_stack_, nullptr);
}

int StopOnSignal::requested() const { return stop_signal; }

}  // namespace agf::train
