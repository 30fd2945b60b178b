#include "train/cuda/nccl_sum.h"

#if AGF_WITH_NCCL
#include <nccl.h>

#include <cstring>

#include "core/cuda/runtime.h"
#include "core/error.h"

namespace agf::train {

namespace {

void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) fail("{} failed: {}", call, ncclGetErrorString(result));
}

struct Communicator {
  ncclComm_t handle = nullptr;
  int device = -1;
};

// The process's communicator, on `device` (one GPU per process).
ncclComm_t communicator(World& world, int device) {
  static Communicator made;
  if (made.handle != nullptr) {
    AGF_CHECK(made.device == device, "nccl_sum: the communicator of this process is on cuda:{}, the buffer on cuda:{}",
              made.device, device);
    return made.handle;
  }
  ncclUniqueId id;
  if (world.is_root()) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  std::string bytes(reinterpret_cast<const char*>(&id), sizeof id);
  world.broadcast(bytes);
  std::memcpy(&id, bytes.data(), sizeof id);
  cuda::DeviceGuard guard(device);
  check_nccl(ncclCommInitRank(&made.handle, world.size(), id, world.rank()), "ncclCommInitRank");
  made.device = device;
  return made.handle;
}

}  // namespace

void nccl_sum(Tensor& buffer, World& world) {
  const int device = buffer.device().index;
  ncclComm_t handle = communicator(world, device);
  cuda::DeviceGuard guard(device);
  check_nccl(ncclAllReduce(buffer.raw_data(), buffer.raw_data(), static_cast<std::size_t>(buffer.numel()),
                           buffer.dtype() == DType::f32 ? ncclFloat32 : ncclFloat64, ncclSum, handle,
                           cuda::current_stream(device)),
             "ncclAllReduce");
}

}  // namespace agf::train
#endif
