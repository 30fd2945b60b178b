#pragma once
// What the emulated device has been asked to do since the process started. The count that matters for a
// real GPU is `host_waits`: each cudaStreamSynchronize or cudaDeviceSynchronize is a point where the host
// stops until the device's queue has drained, so the GPU then idles until the host queues more work.
// AGF_EMULATOR_STATS=1 prints these figures on stderr when the process ends:
//     AGF_EMULATOR_STATS=1 build/agf_emulated train --device cuda --max-steps 2 ...
#include <cstdint>

namespace agf::emulator {

struct Statistics {
  int64_t launches = 0;         // kernels run (cuBLAS GEMMs not included: see gemms)
  int64_t gemms = 0;            // cuBLAS GEMM calls (each one or more kernels on a GPU)
  int64_t threads = 0;          // CUDA threads run, over all launches
  int64_t host_waits = 0;       // cudaStreamSynchronize and cudaDeviceSynchronize calls
  int64_t bytes_to_host = 0;    // copied device -> host
  int64_t bytes_to_device = 0;  // copied host -> device
};

Statistics statistics();

// Called by the emulated cuBLAS for each GEMM it computes.
void count_gemm();

}  // namespace agf::emulator
