#pragma once
// AGF_HOST_DEVICE marks code compiled for both the CPU and CUDA kernels (Philox, shared op formulas),
// so a formula is written once and both backends compute it the same way.
#if defined(__CUDACC__)
#define AGF_HOST_DEVICE __host__ __device__
#else
#define AGF_HOST_DEVICE
#endif
