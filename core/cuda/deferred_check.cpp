// The host side of core/cuda/deferred_check.h: one record per device (cudaMalloc'd once, never freed, like
// the device's stream), the messages of the checks registered since it was last read, and a host copy of
// it that the copy to the host or synchronize() fills in the same wait as their own.
#include "core/cuda/deferred_check.h"

#include <deque>
#include <mutex>
#include <vector>

#include "core/cuda/runtime.h"
#include "core/error.h"

namespace agf::cuda {

namespace {

constexpr std::size_t kMostPending = 1024;

struct DeviceChecks {
  DeferredRecord* record = nullptr;  // on the device
  DeferredRecord host_copy{};        // filled by the copy read_deferred_record queues
  std::deque<std::string> pending;   // messages of the checks not yet read; pending[0] has id first_id
  unsigned long long first_id = 1;
  std::size_t read_queued = 0;  // how many of `pending` the queued copy covers
};

std::mutex& checks_mutex() {
  static std::mutex mutex;
  return mutex;
}

DeviceChecks& checks_of(int device) {
  static std::vector<DeviceChecks> devices;
  if (static_cast<std::size_t>(device) >= devices.size()) devices.resize(static_cast<std::size_t>(device) + 1);
  DeviceChecks& checks = devices[static_cast<std::size_t>(device)];
  if (!checks.record) {
    DeviceGuard guard(device);
    void* memory = nullptr;
    AGF_CUDA_CHECK(cudaMalloc(&memory, sizeof(DeferredRecord)));
    AGF_CUDA_CHECK(cudaMemsetAsync(memory, 0, sizeof(DeferredRecord), current_stream(device)));
    checks.record = static_cast<DeferredRecord*>(memory);
  }
  return checks;
}

void replace_all(std::string& text, const std::string& token, const std::string& value) {
  for (std::size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + value.size()))
    text.replace(at, token.size(), value);
}

// With the mutex held, before the host waits for `device`: queues the copy of the record.
void queue_read(int device) {
  DeviceChecks& checks = checks_of(device);
  checks.read_queued = checks.pending.size();
  if (checks.read_queued == 0) return;
  DeviceGuard guard(device);
  AGF_CUDA_CHECK(cudaMemcpyAsync(&checks.host_copy, checks.record, sizeof(DeferredRecord), cudaMemcpyDeviceToHost,
                                 current_stream(device)));
}

// With the mutex held, after the wait: the first failure's message ("" when none); forgets the checks read.
std::string take_failure(int device) {
  DeviceChecks& checks = checks_of(device);
  const std::size_t read = checks.read_queued;
  checks.read_queued = 0;
  if (read == 0) return {};
  const DeferredRecord record = checks.host_copy;
  std::string message;
  if (record.check != 0) {
    const unsigned long long index = record.check - checks.first_id;
    message = record.check >= checks.first_id && index < checks.pending.size()
                  ? checks.pending[index]
                  : std::string("a deferred device check failed (value {value} at {position})");
    replace_all(message, "{value}", std::to_string(record.value));
    replace_all(message, "{position}", std::to_string(record.position));
    DeviceGuard guard(device);
    AGF_CUDA_CHECK(cudaMemsetAsync(checks.record, 0, sizeof(DeferredRecord), current_stream(device)));
  }
  checks.pending.erase(checks.pending.begin(), checks.pending.begin() + static_cast<std::ptrdiff_t>(read));
  checks.first_id += read;
  return message;
}

}  // namespace

DeferredCheck register_deferred_check(int device, std::string message) {
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(checks_mutex());
    DeviceChecks& checks = checks_of(device);
    if (checks.pending.size() >= kMostPending) {
      queue_read(device);
      DeviceGuard guard(device);
      AGF_CUDA_CHECK(cudaStreamSynchronize(current_stream(device)));
      failure = take_failure(device);
    }
    if (failure.empty()) {
      checks.pending.push_back(std::move(message));
      return {checks.first_id + checks.pending.size() - 1, checks.record};
    }
  }
  fail("{}", failure);
}

void read_deferred_record(int device) {
  std::lock_guard<std::mutex> lock(checks_mutex());
  queue_read(device);
}

void raise_deferred_errors(int device) {
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(checks_mutex());
    failure = take_failure(device);
  }
  if (!failure.empty()) fail("{}", failure);
}

}  // namespace agf::cuda
