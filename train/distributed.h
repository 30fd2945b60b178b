#pragma once
// The processes that train one model together (docs/distributed.md): a world of one, or the N processes
// that `mpirun -np N agf train ...` started. Data parallelism needs few collective operations, all here:
//
//   sum          every process's buffer replaced by the element-wise sum over the world (MPI_Allreduce; on a
//                GPU, NCCL's ncclAllReduce where the build has NCCL, else through host memory)
//   all_gather   one number from each process, to every process
//   broadcast    process 0's bytes to every process (a checkpoint to resume from)
//   wait_for_all a barrier that sleeps rather than spins, for the ranks that wait while rank 0 validates
//
// A world of one does none of this: every call returns at once, so the trainer has one code path. MPI is
// initialised on the first call of world() in a process that mpirun started (its environment says so),
// and finished by leave_world(); an agf built without MPI refuses to run under mpirun rather than train N
// copies of one model side by side, each writing the same files.
//
// Failures: a process that leaves with an error calls leave_world(status != 0), which aborts the whole job
// (MPI_Abort): every other process is stopped by mpirun at once, wherever it waits. A process that dies
// (SIGKILL, a crash) is noticed by mpirun, which stops the others within about 2 s and names the lost
// rank. Neither hangs.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace agf::train {

class World {
 public:
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  // The process's index among those on its own machine (which GPU it takes), and their number.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // " (rank 1 of 2)" in a world of several processes, "" in a world of one: for error messages.
  std::string label() const;

  // In place, on every process: x ← Σ over the world of x. `buffer` is contiguous, f32 or f64 (on a GPU, the
  // same dtype on every process's own device); every process passes the same dtype and numel.
  void sum(Tensor& buffer);
  void sum(std::span<double> values);
  // Element r of the result is process r's `value`, on every process.
  std::vector<uint64_t> all_gather(uint64_t value);
  // Process 0's `bytes` (any length) replace every other process's.
  void broadcast(std::string& bytes);
  // Returns when every process has called it; sleeps (1 ms polls) rather than spin while it waits.
  void wait_for_all();

 private:
  friend World& world();
  World() = default;
  static World* start();  // MPI_Init when a launcher started this process
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

// This process's world (MPI initialised on the first call, when mpirun started the process).
World& world();

// Whether this agf was built with MPI (AGF_MPI, docs/distributed.md).
bool mpi_built_in();

// Whether this process was started by mpirun (or another MPI launcher) as one of several: its environment
// holds the launcher's variables. Does not initialise MPI.
bool launched_as_one_of_several();

// World::label() of this process's world if world() has started it, else "" (never starts MPI: for the error
// message of a command that may not have used it).
std::string started_world_label();

// The end of the program: in a world of several processes, MPI_Finalize after success (status 0) and
// MPI_Abort(status) after a failure, which stops the whole job; nothing in a world of one. Returns `status`.
int leave_world(int status);

}  // namespace agf::train
