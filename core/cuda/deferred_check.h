#pragma once
// Checks whose verdict stays on the device until the host next waits for it anyway. A check that needs
// data on the device (are these token ids inside the vocabulary?) would otherwise make the host wait in
// the middle of a step; instead a kernel writes the first failure into a small record in device memory,
// and the host reads that record at its next synchronisation (synchronize(), a copy to the host), where
// the failure is raised with the check's message. The ops that consume the data stay memory-safe when
// it is bad (a bad id reads zeros, a bad length is clamped), so nothing is corrupted in between; the
// error names the op, the value and its position, as an immediate check would, only later.
//
// Plain C++ (no fmt): nvcc-compiled kernels include it for DeferredRecord.
#include <string>

namespace agf::cuda {

// In device memory, one per device. `check` is 0 while nothing failed; else the id of the failed check,
// with the bad value and its position. Only the first failure is kept.
struct DeferredRecord {
  unsigned long long check;
  long long value;
  long long position;
};

struct DeferredCheck {
  unsigned long long id = 0;         // what the kernel writes into record->check on a failure
  DeferredRecord* record = nullptr;  // the device's record
};

// Registers a check on `device`. `message` is the error raised when it fails, with "{value}" and
// "{position}" replaced by the record's. Past 1024 checks not yet read, the host waits and reads them first,
// so that an error surfaces within a bounded amount of work.
DeferredCheck register_deferred_check(int device, std::string message);

// The host's wait, in two halves around it: read_deferred_record(device) queues the copy of the record
// to the host (when checks are pending) on the device's stream, just before the host waits for that
// stream; raise_deferred_errors(device), after the wait, forgets the checks read and raises the first
// failure's message (resetting the record). synchronize() and the copies to the host do both, so the
// verdict costs no wait of its own and callers rarely need these directly.
void read_deferred_record(int device);
void raise_deferred_errors(int device);

}  // namespace agf::cuda
