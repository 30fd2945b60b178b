#include "train/distributed.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "core/error.h"
#include "core/number_text.h"

#if AGF_WITH_MPI
#include <mpi.h>
#endif
#if AGF_WITH_NCCL
#include "train/cuda/nccl_sum.h"
#endif

namespace agf::train {

namespace {

// The number of processes the launcher started, from its environment; 0 when it does not say (PMIx alone),
// -1 when no launcher started this process.
int launcher_world_size() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {  // Open MPI; MPICH, Intel MPI
    if (const char* text = std::getenv(variable)) return parse_number<int>(text).value_or(0);
  }
  return std::getenv("PMIX_RANK") != nullptr ? 0 : -1;  // srun --mpi=pmix and other PMIx launchers
}

World* started_world = nullptr;

#if AGF_WITH_MPI
bool mpi_started = false;

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail("{} failed: {}", what, std::string(text, static_cast<std::size_t>(length)));
}

// MPI's counts are ints: a buffer of more elements goes in pieces.
constexpr int64_t kMaxMpiCount = int64_t{1} << 30;

template <class Call>
void in_pieces(int64_t count, Call call) {
  for (int64_t start = 0; start < count; start += kMaxMpiCount) {
    call(start, static_cast<int>(std::min(kMaxMpiCount, count - start)));
  }
}
#endif

}  // namespace

#if AGF_WITH_MPI
bool mpi_built_in() { return true; }
#else
bool mpi_built_in() { return false; }
#endif

bool launched_as_one_of_several() { return launcher_world_size() != -1 && launcher_world_size() != 1; }

World& world() {
  // Never destroyed: leave_world() ends MPI, and nothing may use it after that.
  static World* instance = World::start();
  started_world = instance;
  return *instance;
}

std::string started_world_label() { return started_world ? started_world->label() : ""; }

World* World::start() {
  auto* made = new World();
  if (launcher_world_size() == -1) return made;
#if AGF_WITH_MPI
  // Only this (the main) thread calls MPI; OpenMP's threads never do.
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  mpi_started = true;
  // Errors of MPI calls come back as codes (check_mpi turns them into agf errors, and leave_world aborts).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &made->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &made->size_);
  MPI_Comm machine;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, made->rank_, MPI_INFO_NULL, &machine);
  MPI_Comm_rank(machine, &made->local_rank_);
  MPI_Comm_size(machine, &made->local_size_);
  MPI_Comm_free(&machine);
#else
  AGF_CHECK(!launched_as_one_of_several(),
            "this agf was built without MPI, so under mpirun each process would "
            "train a model of its own and all would write the same files; rebuild it with MPI (apt-get install "
            "libopenmpi-dev, then cmake -DAGF_MPI=ON; docs/distributed.md)");
#endif
  return made;
}

std::string World::label() const { return size_ > 1 ? fmt::format(" (rank {} of {})", rank_, size_) : ""; }

void World::sum(Tensor& buffer) {
  if (size_ == 1) return;
  AGF_CHECK(buffer.is_contiguous() && (buffer.dtype() == DType::f32 || buffer.dtype() == DType::f64),
            "World::sum: the buffer must be contiguous f32 or f64, got {}", buffer.description());
#if AGF_WITH_MPI
  if (buffer.device().is_cuda()) {
#if AGF_WITH_NCCL
    nccl_sum(buffer, *this);
#else
    // Without NCCL the sum goes through host memory: MPI is not assumed to read GPU memory.
    Tensor host = buffer.to(Device::cpu());
    sum(host);
    buffer.copy_from(host);
#endif
    return;
  }
  const MPI_Datatype type = buffer.dtype() == DType::f32 ? MPI_FLOAT : MPI_DOUBLE;
  char* data = static_cast<char*>(buffer.raw_data());
  const auto element_size = static_cast<int64_t>(dtype_size(buffer.dtype()));
  in_pieces(buffer.numel(), [&](int64_t start, int count) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + start * element_size, count, type, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce");
  });
#endif
}

void World::sum(std::span<double> values) {
  if (size_ == 1) return;
#if AGF_WITH_MPI
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
#endif
}

std::vector<uint64_t> World::all_gather(uint64_t value) {
  std::vector<uint64_t> values(static_cast<std::size_t>(size_), value);
#if AGF_WITH_MPI
  if (size_ > 1) {
    check_mpi(MPI_Allgather(&value, 1, MPI_UINT64_T, values.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD), "MPI_Allgather");
  }
#endif
  return values;
}

void World::broadcast(std::string& bytes) {
  if (size_ == 1) return;
#if AGF_WITH_MPI
  uint64_t length = bytes.size();
  check_mpi(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  bytes.resize(length);
  in_pieces(static_cast<int64_t>(length), [&](int64_t start, int count) {
    check_mpi(MPI_Bcast(bytes.data() + start, count, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
  });
#endif
}

void World::wait_for_all() {
  if (size_ == 1) return;
#if AGF_WITH_MPI
  // MPI's blocking barrier polls at full speed; while rank 0 validates for minutes, that would take a core
  // from it on a shared machine.
  MPI_Request request;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
  for (int done = 0;;) {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
#endif
}

int leave_world(int status) {
#if AGF_WITH_MPI
  if (mpi_started) {
    mpi_started = false;
    if (status != 0) {
      // Every other process may be waiting in a collective operation this one will never join: stop them all.
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, status);
    }
    MPI_Finalize();
  }
#endif
  return status;
}

}  // namespace agf::train
