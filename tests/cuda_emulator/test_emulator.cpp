// The CUDA emulator itself: that it computes what a GPU computes (thread indices, shared memory,
// barriers, shuffles, atomics, GEMM) and refuses what a GPU refuses (bad launch shapes, divergent
// barriers, shuffles with a wrong mask, copies with pointers that are not device memory), with a
// message saying what. Only in agf_tests_emulated. Kernels here use the rewritten launch syntax.
#include <catch2/catch.hpp>
#include <cublas_v2.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulated_cuda.h"
#include "tests/cuda_emulator/statistics.h"

namespace {

using agf::emulator::Launch;

// One device buffer of n values, copied in from and out to host vectors.
template <class T>
struct DeviceBuffer {
  explicit DeviceBuffer(std::size_t n, T fill = T{}) : count(n) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(T)) == cudaSuccess);
    write(std::vector<T>(n, fill));
  }
  ~DeviceBuffer() { cudaFree(data); }
  void write(const std::vector<T>& values) {
    REQUIRE(cudaMemcpyAsync(data, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice, nullptr) ==
            cudaSuccess);
  }
  std::vector<T> read() const {
    std::vector<T> values(count);
    REQUIRE(cudaMemcpyAsync(values.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost, nullptr) == cudaSuccess);
    return values;
  }
  T* data = nullptr;
  std::size_t count;
};

// The error the last launch left, with its description ("" when it succeeded).
std::string last_launch_error() {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? "" : cudaGetErrorString(error);
}

__global__ void write_global_index(int* out) {
  const unsigned block_threads = blockDim.x * blockDim.y;
  const unsigned in_block = threadIdx.y * blockDim.x + threadIdx.x;
  const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
  out[block * block_threads + in_block] = static_cast<int>(block * 1000 + in_block);
}

// Reverses each block's slice through shared memory: wrong without the barrier.
__global__ void reverse_in_block(const float* in, float* out) {
  __shared__ float tile[64];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

__global__ void warp_shuffles(int* xor_sum, int* down_sum, int* broadcast) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  int a = lane, b = lane;
  for (int offset = 16; offset > 0; offset /= 2) a += __shfl_xor_sync(0xffffffffu, a, offset);
  for (int offset = 16; offset > 0; offset /= 2) b += __shfl_down_sync(0xffffffffu, b, offset);
  xor_sum[threadIdx.x] = a;
  down_sum[threadIdx.x] = b;
  broadcast[threadIdx.x] = __shfl_sync(0xffffffffu, lane * 10, 7);
}

// Two half warps shuffle within themselves a different number of times (lanes 0-15 three rotations, lanes
// 16-31 one), then the whole warp broadcasts lane 20's result.
__global__ void half_warp_shuffles(int* rotated, int* broadcast) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const bool low = lane < 16;
  const unsigned mask = low ? 0x0000ffffu : 0xffff0000u;
  int value = lane * 100;
  for (int round = 0; round < (low ? 3 : 1); ++round) value = __shfl_sync(mask, value, (lane + 1) % 16, 16);
  rotated[threadIdx.x] = value;
  broadcast[threadIdx.x] = __shfl_sync(0xffffffffu, value, 20);
}

__global__ void count_with_atomics(unsigned long long* counter) { atomicAdd(counter, 1); }

__global__ void sync_after_early_return(float* out) {
  if (threadIdx.x >= 16) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void shuffle_in_short_warp(int* out) { out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1); }

__global__ void read_dynamic_shared(float* out) {
  float* shared = reinterpret_cast<float*>(::agf::emulator::dynamic_shared_memory());
  out[threadIdx.x] = shared[threadIdx.x];
}

// As the source rewrite turns `__global__ void __launch_bounds__(64) bounded_kernel(int* out) {`.
__global__ void bounded_kernel(int* out) {
  ::agf::emulator::check_launch_bounds(64);
  out[threadIdx.x] = 1;
}

// Writes out[n] of an allocation of n floats: one past its end.
__global__ void write_past_end(float* out, int n) { out[n + static_cast<int>(threadIdx.x)] = 1; }

// How a forked child running `body` ended, and what it printed (stdout and stderr together).
struct ChildOutcome {
  bool died_of_segfault = false;
  std::string output;
};

// Runs `body` in a child process, so that a fault that must end a process ends only the child. The child
// leaves with status 0 if `body` returns and 2 if it throws, or dies of SIGALRM after 60 s; it never
// returns into the test runner.
template <class Body>
ChildOutcome run_in_child(Body&& body) {
  int ends[2];
  REQUIRE(pipe(ends) == 0);
  std::fflush(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(ends[1], STDOUT_FILENO);
    dup2(ends[1], STDERR_FILENO);
    close(ends[0]);
    close(ends[1]);
    alarm(60);  // a child that hangs (a fault handler looping) dies of SIGALRM instead of hanging the tests
    try {
      body();
    } catch (...) {
      _exit(2);
    }
    _exit(0);
  }
  close(ends[1]);
  ChildOutcome outcome;
  char chunk[4096];
  for (ssize_t n; (n = read(ends[0], chunk, sizeof chunk)) > 0;) {
    outcome.output.append(chunk, static_cast<std::size_t>(n));
  }
  close(ends[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  outcome.died_of_segfault = WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
  return outcome;
}

}  // namespace

TEST_CASE("emulator: thread and block indices cover a 2-D grid of 2-D blocks once each", "[emulator]") {
  DeviceBuffer<int> out(3 * 2 * 8 * 4, -1);
  write_global_index | Launch(dim3(3, 2), dim3(8, 4)).args(out.data);
  REQUIRE(last_launch_error().empty());
  const std::vector<int> values = out.read();
  for (unsigned block = 0; block < 6; ++block)
    for (unsigned t = 0; t < 32; ++t) CHECK(values[block * 32 + t] == static_cast<int>(block * 1000 + t));
}

TEST_CASE("emulator: __syncthreads orders shared-memory writes before reads", "[emulator]") {
  std::vector<float> input(128);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i);
  DeviceBuffer<float> in(128), out(128);
  in.write(input);
  reverse_in_block | Launch(2, 64).args(in.data, out.data);
  REQUIRE(last_launch_error().empty());
  const std::vector<float> values = out.read();
  for (std::size_t i = 0; i < 128; ++i) CHECK(values[i] == input[(i / 64) * 64 + 63 - i % 64]);
}

TEST_CASE("emulator: warp shuffles exchange values as on the GPU", "[emulator]") {
  DeviceBuffer<int> xor_sum(64), down_sum(64), broadcast(64);
  warp_shuffles | Launch(1, 64).args(xor_sum.data, down_sum.data, broadcast.data);
  REQUIRE(last_launch_error().empty());
  const std::vector<int> x = xor_sum.read(), d = down_sum.read(), b = broadcast.read();
  for (int t = 0; t < 64; ++t) {
    CHECK(x[t] == 496);  // Σ 0..31 in every lane (butterfly)
    CHECK(b[t] == 70);   // lane 7's value
  }
  CHECK(d[0] == 496);  // the tree sum lands in lane 0
  CHECK(d[32] == 496);
  CHECK(d[31] == 31 * 32);  // lane 31 only ever adds itself (a source past the warp returns its own value)
}

TEST_CASE("emulator: shuffles of half-warp masks run independently, then meet a full-warp one", "[emulator]") {
  DeviceBuffer<int> rotated(32), broadcast(32);
  half_warp_shuffles | Launch(1, 32).args(rotated.data, broadcast.data);
  REQUIRE(last_launch_error().empty());
  const std::vector<int> r = rotated.read(), b = broadcast.read();
  for (int lane = 0; lane < 32; ++lane) {
    // Width 16: a source lane names a lane of the caller's own half.
    const int expected = lane < 16 ? (lane + 3) % 16 * 100 : (16 + (lane - 16 + 1) % 16) * 100;
    CHECK(r[lane] == expected);
    CHECK(b[lane] == 2100);  // lane 20 holds lane 21's value
  }
}

TEST_CASE("emulator: atomics from every thread of every block all land", "[emulator]") {
  DeviceBuffer<unsigned long long> counter(1, 0);
  count_with_atomics | Launch(5, 96).args(counter.data);
  REQUIRE(last_launch_error().empty());
  CHECK(counter.read()[0] == 480);
}

TEST_CASE("emulator: a divergent __syncthreads fails the launch, naming it", "[emulator]") {
  DeviceBuffer<float> out(32);
  sync_after_early_return | Launch(1, 32).args(out.data);
  const std::string error = last_launch_error();
  CHECK_THAT(error, Catch::Contains("__syncthreads() reached by 16 of the block's 32 threads"));
  CHECK(cudaGetLastError() == cudaSuccess);  // reading the error clears it
}

TEST_CASE("emulator: a full-mask shuffle in a warp of fewer than 32 threads fails the launch", "[emulator]") {
  DeviceBuffer<int> out(16);
  shuffle_in_short_warp | Launch(1, 16).args(out.data);
  CHECK_THAT(last_launch_error(), Catch::Contains("in a warp of only 16 threads"));
}

TEST_CASE("emulator: a block larger than the kernel's __launch_bounds__ fails the launch", "[emulator]") {
  DeviceBuffer<int> out(128);
  bounded_kernel | Launch(2, 64).args(out.data);
  CHECK(last_launch_error().empty());
  bounded_kernel | Launch(1, dim3(32, 4)).args(out.data);
  CHECK_THAT(last_launch_error(),
             Catch::Contains("a block of 128 threads (32×4×1) for a kernel declared __launch_bounds__(64)"));
}

TEST_CASE("emulator: launch shapes over the GPU's limits are refused", "[emulator]") {
  DeviceBuffer<int> out(4096);
  write_global_index | Launch(1, 2048).args(out.data);
  CHECK_THAT(last_launch_error(), Catch::Contains("more than 1024 threads per block"));
  write_global_index | Launch(dim3(1, 70000), 1).args(out.data);
  CHECK_THAT(last_launch_error(), Catch::Contains("grid dimension"));
}

TEST_CASE("emulator: dynamic shared memory over 48 KiB needs the kernel's attribute raised", "[emulator]") {
  DeviceBuffer<float> out(32);
  const std::size_t bytes = 64 << 10;
  read_dynamic_shared | Launch(1, 32, bytes).args(out.data);
  CHECK_THAT(last_launch_error(), Catch::Contains("cudaFuncAttributeMaxDynamicSharedMemorySize"));
  REQUIRE(cudaFuncSetAttribute(reinterpret_cast<const void*>(&read_dynamic_shared),
                               cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) == cudaSuccess);
  read_dynamic_shared | Launch(1, 32, bytes).args(out.data);
  REQUIRE(last_launch_error().empty());
  for (float v : out.read()) CHECK(std::isnan(v));  // never written: the NaN poison shows through
}

TEST_CASE("emulator: copies check that their pointers are device memory of the right size", "[emulator]") {
  DeviceBuffer<float> device(8);
  std::vector<float> host(16);
  CHECK(cudaMemcpyAsync(host.data(), device.data, 16 * sizeof(float), cudaMemcpyDeviceToHost, nullptr) ==
        cudaErrorInvalidValue);
  CHECK_THAT(std::string(cudaGetErrorString(cudaErrorInvalidValue)), Catch::Contains("run past the end"));
  CHECK(cudaMemcpyAsync(host.data(), host.data() + 8, 4, cudaMemcpyDeviceToHost, nullptr) == cudaErrorInvalidValue);
  CHECK_THAT(std::string(cudaGetErrorString(cudaErrorInvalidValue)),
             Catch::Contains("source") && Catch::Contains("is not device memory"));
  CHECK(cudaMemcpyAsync(device.data, host.data(), 4, cudaMemcpyDeviceToHost, nullptr) == cudaErrorInvalidValue);
  CHECK_THAT(std::string(cudaGetErrorString(cudaErrorInvalidValue)), Catch::Contains("copy kind says host"));
}

TEST_CASE("emulator: cuBLAS strided-batched GEMM in column-major with transposes", "[emulator]") {
  // Two batch entries of C (2×3) = Aᵀ·B with A stored 4×2 and B 4×3, all column-major.
  const int m = 2, n = 3, k = 4, batch = 2;
  std::vector<float> a(batch * k * m), b(batch * k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f;
  DeviceBuffer<float> da(a.size()), db(b.size()), dc(batch * m * n, std::nanf(""));
  da.write(a);
  db.write(b);
  cublasHandle_t handle = nullptr;
  REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  const float alpha = 2, beta = 0;
  REQUIRE(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da.data, CUDA_R_32F, k, k * m,
                                     db.data, CUDA_R_32F, k, k * n, &beta, dc.data, CUDA_R_32F, m, m * n, batch,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  const std::vector<float> c = dc.read();
  for (int e = 0; e < batch; ++e)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float expected = 0;
        for (int p = 0; p < k; ++p) expected += a[e * k * m + i * k + p] * b[e * k * n + j * k + p];
        CHECK(c[e * m * n + j * m + i] == Approx(alpha * expected));  // beta = 0: C's NaN never read
      }
  CHECK(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da.data, CUDA_R_32F, 1, 0,
                                   db.data, CUDA_R_32F, k, 0, &beta, dc.data, CUDA_R_32F, m, 0, 1, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);  // lda < m
}

TEST_CASE("emulator: cuBLAS GEMM, every transpose pair, padded leading dimensions, beta", "[emulator]") {
  // C (m×n, ldc = m+1) = alpha·op(A)·op(B) + beta·C in f64, column-major, two batch entries.
  const int m = 3, n = 2, k = 4, batch = 2;
  cublasHandle_t handle = nullptr;
  REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  const agf::emulator::Statistics before = agf::emulator::statistics();
  for (const cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    for (const cublasOperation_t transb : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      const bool a_plain = transa == CUBLAS_OP_N, b_plain = transb == CUBLAS_OP_N;
      const int lda = (a_plain ? m : k) + 2, ldb = (b_plain ? k : n) + 1, ldc = m + 1;
      const int a_size = lda * (a_plain ? k : m), b_size = ldb * (b_plain ? n : k), c_size = ldc * n;
      std::vector<double> a(batch * a_size), b(batch * b_size), c(batch * c_size);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3;
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) * 0.5;
      for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<double>(i % 3) + 1;
      DeviceBuffer<double> da(a.size()), db(b.size()), dc(c.size());
      da.write(a);
      db.write(b);
      dc.write(c);
      const double alpha = 2, beta = 0.5;
      REQUIRE(cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, &alpha, da.data, CUDA_R_64F, lda, a_size,
                                         db.data, CUDA_R_64F, ldb, b_size, &beta, dc.data, CUDA_R_64F, ldc, c_size,
                                         batch, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
      const std::vector<double> result = dc.read();
      INFO("transa " << (a_plain ? "N" : "T") << ", transb " << (b_plain ? "N" : "T"));
      for (int e = 0; e < batch; ++e) {
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            double product = 0;
            for (int p = 0; p < k; ++p) {
              product += a[e * a_size + (a_plain ? i + p * lda : p + i * lda)] *
                         b[e * b_size + (b_plain ? p + j * ldb : j + p * ldb)];
            }
            const int at = e * c_size + i + j * ldc;
            CHECK(result[at] == alpha * product + beta * c[at]);  // small integers and halves: exact
          }
        }
        for (int j = 0; j < n; ++j) {
          const int padding = e * c_size + m + j * ldc;  // the row past m in C's column j: untouched
          CHECK(result[padding] == c[padding]);
        }
      }
    }
  }
  CHECK(agf::emulator::statistics().gemms - before.gemms == 4);
}

TEST_CASE("emulator: statistics count launches, CUDA threads, host waits and bytes each way", "[emulator]") {
  DeviceBuffer<int> out(24);  // 96 bytes to the device
  const agf::emulator::Statistics before = agf::emulator::statistics();
  write_global_index | Launch(dim3(3, 2), dim3(2, 2)).args(out.data);
  write_global_index | Launch(dim3(1, 1), dim3(4, 1)).args(out.data);
  const std::vector<int> values = out.read();  // 96 bytes to the host
  out.write(values);                           // and back
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const agf::emulator::Statistics after = agf::emulator::statistics();
  CHECK(after.launches - before.launches == 2);
  CHECK(after.gemms == before.gemms);
  CHECK(after.threads - before.threads == 3 * 2 * 2 * 2 + 4);
  CHECK(after.host_waits - before.host_waits == 2);
  CHECK(after.bytes_to_host - before.bytes_to_host == 96);
  CHECK(after.bytes_to_device - before.bytes_to_device == 96);
}

TEST_CASE("emulator: host code reading device memory dies with a message naming the allocation", "[emulator]") {
  const ChildOutcome outcome = run_in_child([] {
    float* device = nullptr;
    if (cudaMalloc(reinterpret_cast<void**>(&device), 40 * sizeof(float)) != cudaSuccess) return;
    const volatile float* through = device;
    std::printf("read %f\n", static_cast<double>(*through));  // works on a host, crashes on a GPU
    std::fflush(stdout);
  });
  INFO(outcome.output);
  CHECK(outcome.died_of_segfault);
  CHECK_THAT(outcome.output, Catch::Contains("host code dereferenced") && Catch::Contains("the 160-byte allocation") &&
                                 Catch::Contains("on cuda:0"));
  CHECK_THAT(outcome.output, !Catch::Contains("read "));
}

TEST_CASE("emulator: a kernel writing past the end of an allocation dies with a message naming it", "[emulator]") {
  // 64 floats = 256 bytes, a whole multiple of cudaMalloc's alignment: the guard page begins at its end.
  const ChildOutcome outcome = run_in_child([] {
    float* device = nullptr;
    if (cudaMalloc(reinterpret_cast<void**>(&device), 64 * sizeof(float)) != cudaSuccess) return;
    write_past_end | Launch(1, 1).args(device, 64);
    cudaDeviceSynchronize();
  });
  INFO(outcome.output);
  CHECK(outcome.died_of_segfault);
  CHECK_THAT(outcome.output, Catch::Contains("(offset +256): past the end of the 256-byte allocation"));
}
