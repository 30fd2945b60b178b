// The gravitational table and its backward on a GPU, in double (the table is O(H·T): small). Every
// gradient is a sum written by one thread, in a fixed order: no atomics, the same result every run.
//
// Forward, one thread per (δ, h, D, j):   C = LC1(δ,h,D) · lc2[δ,h,i] · lc3[δ,h,i,j],   i = min(D, L-1)
// Backward (docs/agf-backprop.md §6), with gC = ∂L/∂C and g_LC1(δ,h,D) = Σ_j gC(j) · lc2[i] · lc3[i,j]:
//   one thread per (δ, h):       ∂L/∂G = Σ_D g_LC1·(1+D·rho)^-k,   ∂L/∂rho = Σ_D g_LC1·(-k·D·LC1/(1+D·rho)) (0 if rho < 0),
//                                its part of ∂L/∂k = Σ_D g_LC1·(-ln(1+D·rho)·LC1)
//   one thread per (δ, h, i):    ∂L/∂lc2[i] = Σ_{D: min(D,L-1)=i} Σ_j gC(j) · LC1 · lc3[i,j]
//   one thread per (δ, h, i, j): ∂L/∂lc3[i,j] = Σ_{D: min(D,L-1)=i} gC(j) · LC1 · lc2[i]
#include "core/cuda/device_types.h"
#include "core/cuda/runtime.h"
#include "ops/cuda/positional_table_kernels.h"
#include "ops/gravitational_coefficient.h"

namespace agf::cuda {

namespace {

constexpr int kThreads = 256;

__device__ double exponent(const GravitationalTable& t) { return t.k_pointer ? *t.k_pointer : t.k_value; }
__device__ int64_t table_index(const GravitationalTable& t, int64_t distance) {
  return distance < t.max_distance - 1 ? distance : t.max_distance - 1;
}
// lc2[δ,h,i] and lc3[δ,h,i,j], 1 where the scheme has no such level.
__device__ double level2(const GravitationalTable& t, int64_t dh, int64_t i) {
  return t.lc2 ? t.lc2[dh * t.max_distance + i] : 1.0;
}
__device__ double level3(const GravitationalTable& t, int64_t dh, int64_t i, int64_t j) {
  return t.lc3 ? t.lc3[(dh * t.max_distance + i) * t.width + j] : 1.0;
}
// The distances D with min(D, L-1) = i are i ..< end: D = i alone, or every D >= L-1 for the last entry;
// none when i is past the table's distances.
__device__ int64_t end_distance_of(const GravitationalTable& t, int64_t i) {
  const int64_t end = i == t.max_distance - 1 ? t.distances : i + 1;
  return end < t.distances ? end : t.distances;
}

__global__ void table_kernel(GravitationalTable t, double* table) {
  const int64_t count = 2 * t.heads * t.distances * t.width;
  const double k = exponent(t);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = e % t.width, distance = (e / t.width) % t.distances, dh = e / (t.width * t.distances);
    const int64_t i = table_index(t, distance);
    table[e] = ops::lc1_at(t.G[dh], t.rho[dh], k, distance).value * level2(t, dh, i) * level3(t, dh, i, j);
  }
}

__global__ void lc1_parameters_backward_kernel(GravitationalTable t, const double* grad_table, double* grad_G,
                                               double* grad_rho, double* grad_k_parts) {
  const int64_t dh = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (dh >= 2 * t.heads) return;
  const double k = exponent(t), rho = t.rho[dh];
  double gG = 0, grho = 0, gk = 0;
  for (int64_t distance = 0; distance < t.distances; ++distance) {
    const int64_t i = table_index(t, distance);
    const double* gC = grad_table + (dh * t.distances + distance) * t.width;
    double g_lc1 = 0;  // ∂C(j)/∂LC1 = lc2[i]·lc3[i,j]
    for (int64_t j = 0; j < t.width; ++j) g_lc1 += gC[j] * level2(t, dh, i) * level3(t, dh, i, j);
    const ops::Lc1 lc1 = ops::lc1_at(t.G[dh], rho, k, distance);
    gG += g_lc1 * lc1.power;
    if (rho >= 0) grho += g_lc1 * (-k * static_cast<double>(distance) * lc1.value / lc1.base);
    gk += g_lc1 * (-log(lc1.base) * lc1.value);
  }
  grad_G[dh] = gG;
  grad_rho[dh] = grho;
  grad_k_parts[dh] = gk;
}

__global__ void lc2_backward_kernel(GravitationalTable t, const double* grad_table, double* grad_lc2) {
  const int64_t count = 2 * t.heads * t.max_distance;
  const double k = exponent(t);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e % t.max_distance, dh = e / t.max_distance;
    double sum = 0;
    for (int64_t distance = i; distance < end_distance_of(t, i); ++distance) {
      const double lc1 = ops::lc1_at(t.G[dh], t.rho[dh], k, distance).value;
      const double* gC = grad_table + (dh * t.distances + distance) * t.width;
      for (int64_t j = 0; j < t.width; ++j) sum += gC[j] * lc1 * level3(t, dh, i, j);
    }
    grad_lc2[e] = sum;
  }
}

__global__ void lc3_backward_kernel(GravitationalTable t, const double* grad_table, double* grad_lc3) {
  const int64_t count = 2 * t.heads * t.max_distance * t.width;
  const double k = exponent(t);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = e % t.width, i = (e / t.width) % t.max_distance, dh = e / (t.width * t.max_distance);
    double sum = 0;
    for (int64_t distance = i; distance < end_distance_of(t, i); ++distance) {
      const double lc1 = ops::lc1_at(t.G[dh], t.rho[dh], k, distance).value;
      sum += grad_table[(dh * t.distances + distance) * t.width + j] * lc1 * level2(t, dh, i);
    }
    grad_lc3[e] = sum;
  }
}

}  // namespace

void launch_gravitational_table(const GravitationalTable& t, double* table, int device) {
  const int64_t count = 2 * t.heads * t.distances * t.width;
  if (count == 0) return;
  DeviceGuard guard(device);
  table_kernel<<<blocks_for(count, kThreads), kThreads, 0, current_stream(device)>>>(t, table);
  AGF_CUDA_CHECK_LAUNCH(table_kernel);
}

void launch_gravitational_table_backward(const GravitationalTable& t, const double* grad_table, double* grad_G,
                                         double* grad_rho, double* grad_k_parts, double* grad_lc2, double* grad_lc3,
                                         int device) {
  if (t.heads == 0 || t.distances == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  const int64_t pairs = 2 * t.heads;
  lc1_parameters_backward_kernel<<<blocks_for(pairs, kThreads), kThreads, 0, stream>>>(t, grad_table, grad_G, grad_rho,
                                                                                       grad_k_parts);
  AGF_CUDA_CHECK_LAUNCH(lc1_parameters_backward_kernel);
  if (grad_lc2) {
    const int64_t count = pairs * t.max_distance;
    lc2_backward_kernel<<<blocks_for(count, kThreads), kThreads, 0, stream>>>(t, grad_table, grad_lc2);
    AGF_CUDA_CHECK_LAUNCH(lc2_backward_kernel);
  }
  if (grad_lc3) {
    const int64_t count = pairs * t.max_distance * t.width;
    lc3_backward_kernel<<<blocks_for(count, kThreads), kThreads, 0, stream>>>(t, grad_table, grad_lc3);
    AGF_CUDA_CHECK_LAUNCH(lc3_backward_kernel);
  }
}

}  // namespace agf::cuda
