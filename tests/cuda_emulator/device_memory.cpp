// Emulated device memory with guard pages and access control (see device_memory.h).
#include "tests/cuda_emulator/device_memory.h"

#include <execinfo.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace agf::emulator {
namespace {

constexpr std::size_t kAlignment = 256;  // what cudaMalloc guarantees

struct Allocation {
  unsigned char* mapping = nullptr;  // data pages, then one guard page
  std::size_t data_bytes = 0;        // whole pages before the guard
  unsigned char* user = nullptr;     // what cudaMalloc returned; ends at the guard (rounded to kAlignment)
  std::size_t user_bytes = 0;        // as requested
  int device = 0;
};

std::mutex g_mutex;
std::map<std::uintptr_t, Allocation> g_allocations;  // by mapping address
int g_access_depth = 0;
int g_open_device = -1;  // meaningful while g_access_depth > 0
std::size_t g_live_bytes = 0;

// The allocations opened (made readable and writable) during the current device work. Opening is lazy:
// an allocation stays PROT_NONE until the work's first touch faults, and the fault handler opens it and
// lets the access run again; closing reprotects only these. (Opening every allocation at the start of every
// kernel and copy cost two mprotect calls per live allocation each time: most of the emulator's run time.)
// A fixed array, because the fault handler adds to it and may not allocate. The handler reads g_allocations
// and g_opened without g_mutex: it may not wait for a lock its own thread might hold, and agf has no host
// thread that allocates device memory while another runs device work.
constexpr std::size_t kMaxOpened = 4096;
unsigned char* g_opened[kMaxOpened];  // mappings
std::size_t g_opened_count = 0;

std::size_t page_bytes() {
  static const std::size_t bytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

std::size_t capacity_bytes() {
  // The emulated device's memory; AGF_EMULATOR_MEMORY_MB makes out-of-memory paths testable.
  static const std::size_t bytes = [] {
    const char* text = std::getenv("AGF_EMULATOR_MEMORY_MB");
    return text != nullptr ? std::strtoull(text, nullptr, 10) << 20 : std::size_t{16} << 30;
  }();
  return bytes;
}

std::size_t round_up(std::size_t value, std::size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

void set_open(const Allocation& a, bool open) {
  mprotect(a.mapping, a.data_bytes, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

bool opens(int access_device, const Allocation& a) { return access_device < 0 || access_device == a.device; }

const Allocation* containing(std::uintptr_t address) {
  auto it = g_allocations.upper_bound(address);
  if (it == g_allocations.begin()) return nullptr;
  --it;
  const Allocation& a = it->second;
  return address < it->first + a.data_bytes + page_bytes() ? &a : nullptr;
}

// The handlers report_fault replaced, called after its report (index: SIGSEGV, SIGBUS).
struct sigaction g_replaced[2];
int replaced_slot(int signal) { return signal == SIGSEGV ? 0 : 1; }

// Whether a fault at `address` is device work's first touch of an allocation it may use (its data, on the
// work's device), rather than a misuse: past the end (the guard page), another device's memory, host code.
bool is_first_touch(std::uintptr_t address, const Allocation* a) {
  return g_access_depth > 0 && a != nullptr && opens(g_open_device, *a) &&
         address < reinterpret_cast<std::uintptr_t>(a->mapping) + a->data_bytes;
}

// Opens the allocation of a first touch; true when the access can run again.
bool open_on_first_touch(const Allocation& a) {
  if (g_opened_count == kMaxOpened) return false;
  if (mprotect(a.mapping, a.data_bytes, PROT_READ | PROT_WRITE) != 0) return false;
  g_opened[g_opened_count++] = a.mapping;
  return true;
}

// SIGSEGV inside emulated device memory: the first touch of an allocation during device work opens it;
// anything else is a misuse: say which, then hand the fault to the handler this one replaced (the
// default action, or a test framework's, which names the test case).
void report_fault(int signal, siginfo_t* info, void*) {
  if (info->si_code <= 0) {  // sent (raise, kill), not a fault: nothing to explain, and no address to read
    ::signal(signal, SIG_DFL);
    raise(signal);
    return;
  }
  const int saved_errno = errno;
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const Allocation* a = containing(address);
  const bool first_touch = is_first_touch(address, a);
  if (first_touch && open_on_first_touch(*a)) {
    errno = saved_errno;
    return;
  }
  char message[512];
  if (first_touch) {
    char why[128];
    if (g_opened_count == kMaxOpened) {
      std::snprintf(why, sizeof why, "one operation touched more than %zu allocations", kMaxOpened);
    } else {
      std::snprintf(why, sizeof why, "mprotect: %s", std::strerror(errno));
    }
    std::snprintf(message, sizeof message,
                  "agf CUDA emulator: could not open the %zu-byte allocation at %p on cuda:%d for device work (%s)\n",
                  a->user_bytes, static_cast<void*>(a->user), a->device, why);
  } else if (a == nullptr) {
    std::snprintf(message, sizeof message,
                  "agf CUDA emulator: fault at %p, outside emulated device memory (inside a kernel this is "
                  "also what a CUDA thread overflowing its 256 KiB fiber stack looks like)\n",
                  info->si_addr);
  } else {
    const auto user = reinterpret_cast<std::uintptr_t>(a->user);
    const char* what = address >= reinterpret_cast<std::uintptr_t>(a->mapping) + a->data_bytes ? "past the end of"
                       : g_access_depth == 0
                           ? "host code dereferenced (device pointers must be copied to the host first)"
                           : "a kernel of another device touched";
    std::snprintf(message, sizeof message,
                  "agf CUDA emulator: fault at %p (offset %+lld): %s the %zu-byte allocation at %p on cuda:%d\n",
                  info->si_addr, static_cast<long long>(address - user), what, a->user_bytes,
                  static_cast<void*>(a->user), a->device);
  }
  if (write(STDERR_FILENO, message, std::strlen(message)) < 0) {
  }
  void* frames[48];
  backtrace_symbols_fd(frames, backtrace(frames, 48), STDERR_FILENO);
  // The faulting instruction runs again on return and ends in the replaced handler.
  sigaction(signal, &g_replaced[replaced_slot(signal)], nullptr);
}

// Puts report_fault in front of SIGSEGV and SIGBUS unless it is there already. Called at every allocation,
// because a test framework may install its own handler for each test case and restore the default after
// it (Catch2 does), which would leave later faults unexplained.
void install_fault_reporter() {
  static std::once_flag alternate_stack_set;
  std::call_once(alternate_stack_set, [] {
    static std::vector<unsigned char> alternate_stack(std::size_t{1} << 16);
    stack_t stack{};
    stack.ss_sp = alternate_stack.data();
    stack.ss_size = alternate_stack.size();
    sigaltstack(&stack, nullptr);
  });
  for (int signal : {SIGSEGV, SIGBUS}) {
    struct sigaction current {};
    sigaction(signal, nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == &report_fault) continue;
    g_replaced[replaced_slot(signal)] = current;
    struct sigaction action {};
    action.sa_sigaction = &report_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(signal, &action, nullptr);
  }
}

}  // namespace

void* allocate_device_memory(std::size_t bytes, int device) {
  std::lock_guard lock(g_mutex);
  install_fault_reporter();
  if (bytes > capacity_bytes() - g_live_bytes) return nullptr;
  const std::size_t rounded = round_up(bytes == 0 ? 1 : bytes, kAlignment);
  const std::size_t data_bytes = round_up(rounded, page_bytes());
  void* mapping = mmap(nullptr, data_bytes + page_bytes(), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) return nullptr;
  Allocation a;
  a.mapping = static_cast<unsigned char*>(mapping);
  a.data_bytes = data_bytes;
  a.user = a.mapping + data_bytes - rounded;
  a.user_bytes = bytes;
  a.device = device;
  std::memset(a.mapping, 0xff, data_bytes);
  mprotect(a.mapping + data_bytes, page_bytes(), PROT_NONE);
  set_open(a, false);  // until device work touches it
  g_allocations.emplace(reinterpret_cast<std::uintptr_t>(a.mapping), a);
  g_live_bytes += bytes;
  return a.user;
}

bool free_device_memory(void* pointer) {
  std::lock_guard lock(g_mutex);
  const Allocation* a = containing(reinterpret_cast<std::uintptr_t>(pointer));
  if (a == nullptr || a->user != pointer) return false;
  const Allocation copy = *a;
  // Forget it if open: a later mapping may reuse the address. (Listed once at most.)
  for (std::size_t i = 0; i < g_opened_count; ++i) {
    if (g_opened[i] == copy.mapping) {
      g_opened[i] = g_opened[--g_opened_count];
      break;
    }
  }
  g_allocations.erase(reinterpret_cast<std::uintptr_t>(copy.mapping));
  g_live_bytes -= copy.user_bytes;
  munmap(copy.mapping, copy.data_bytes + page_bytes());
  return true;
}

bool is_device_range(const void* pointer, std::size_t bytes, int device, std::string& why) {
  std::lock_guard lock(g_mutex);
  const auto begin = reinterpret_cast<std::uintptr_t>(pointer);
  const Allocation* a = containing(begin);
  if (a == nullptr || begin < reinterpret_cast<std::uintptr_t>(a->user)) {
    why = fmt::format("{} is not device memory", pointer);
    return false;
  }
  const auto user = reinterpret_cast<std::uintptr_t>(a->user);
  if (begin + bytes > user + a->user_bytes) {
    why = fmt::format("{} bytes at offset {} run past the end of the {}-byte allocation at {}", bytes, begin - user,
                      a->user_bytes, static_cast<const void*>(a->user));
    return false;
  }
  if (device >= 0 && a->device != device) {
    why = fmt::format("{} is memory of cuda:{}, not of cuda:{}", pointer, a->device, device);
    return false;
  }
  return true;
}

DeviceAccess::DeviceAccess(int device) {
  std::lock_guard lock(g_mutex);
  install_fault_reporter();  // opening on first touch needs it in front
  if (g_access_depth++ == 0) {
    g_open_device = device;
  } else if (device != g_open_device) {
    g_open_device = -1;  // nested work on another device: any device's memory may be touched
  }
}

DeviceAccess::~DeviceAccess() {
  std::lock_guard lock(g_mutex);
  if (--g_access_depth > 0) return;
  for (std::size_t i = 0; i < g_opened_count; ++i) {
    set_open(g_allocations.at(reinterpret_cast<std::uintptr_t>(g_opened[i])), false);
  }
  g_opened_count = 0;
}

}  // namespace agf::emulator
