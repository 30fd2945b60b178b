// Random fills of GPU tensors give the CPU's values for the same generator state: uniform bit for bit
// (no transcendental function involved, every multiply-add an explicit fma); normal from the same
// words through Box–Muller, where glibc's and CUDA's log/sin/cos may round differently: f32 and
// narrower within one ulp (almost always equal), f64 within a few ulp. The tests print how many
// elements differ and by how much.
#include <catch2/catch.hpp>
#include <cstdio>

#include "tests/cuda/nn_op_compare.h"

using namespace agf;

namespace {
const std::vector<int64_t> kCounts{1, 2, 3, 5, 1000, 4097, 1 << 20};

// The largest ulp distance between two tensors of `dtype` (compared in that dtype's own grid), and how
// many elements differ at all.
struct UlpReport {
  int64_t worst = 0, differing = 0;
};

UlpReport compare_ulp(const Tensor& gpu, const Tensor& cpu) {
  const std::vector<double> a = gpu.to(Device::cpu()).to_double_vector();
  const std::vector<double> b = cpu.to_double_vector();
  REQUIRE(a.size() == b.size());
  UlpReport report;
  for (std::size_t i = 0; i < a.size(); ++i) {
    int64_t distance = 0;
    if (gpu.dtype() == DType::f64) {
      distance = testing::ulp_distance(a[i], b[i]);
    } else if (gpu.dtype() == DType::f32) {
      distance = testing::ulp_distance(static_cast<float>(a[i]), static_cast<float>(b[i]));
    } else {  // f16/bf16: the spacing of the type's values at b (f16 subnormals are 2^-24 apart)
      const double binade = std::exp2(std::floor(std::log2(std::max(std::abs(b[i]), 1e-30))));
      const double spacing = gpu.dtype() == DType::f16 ? std::max(binade / 1024, std::exp2(-24)) : binade / 128;
      distance = static_cast<int64_t>(std::llround(std::abs(a[i] - b[i]) / spacing));
    }
    report.worst = std::max(report.worst, distance);
    report.differing += distance != 0;
  }
  return report;
}
}  // namespace

TEST_CASE("fill_uniform on a GPU equals the CPU bit for bit", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (int64_t count : kCounts) {
    for (DType dtype : testing::kFloatingDtypes) {
      Generator cpu_generator(1234, 17), gpu_generator(1234, 17);
      Tensor cpu = Tensor::empty({count}, dtype);
      Tensor gpu = Tensor::empty({count}, dtype, Device::cuda());
      fill_uniform(cpu, cpu_generator, -0.3, 0.7);
      fill_uniform(gpu, gpu_generator, -0.3, 0.7);
      testing::require_close(gpu, cpu, 0, 0, "fill_uniform");
      CHECK(gpu_generator.offset() == cpu_generator.offset());
    }
  }
  // Large seed and offset: both Philox key words and counter words.
  Generator cpu_generator(0xfedcba9876543210ULL, (1ULL << 33) + 3),
      gpu_generator(0xfedcba9876543210ULL, (1ULL << 33) + 3);
  Tensor on_gpu = Tensor::empty({999}, DType::f32, Device::cuda());
  fill_uniform(on_gpu, gpu_generator);
  testing::require_close(on_gpu, uniform({999}, cpu_generator), 0, 0, "uniform, large seed");
}

TEST_CASE("fill_normal on a GPU equals the CPU (f32 within 1 ulp, f64 within a few)", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  struct Parameters {
    double mean, stddev;
  };
  for (const Parameters& parameters : {Parameters{0.5, 0.02}, Parameters{0.0, 1.0}}) {
    for (int64_t count : kCounts) {
      for (DType dtype : testing::kFloatingDtypes) {
        Generator cpu_generator(99, 5), gpu_generator(99, 5);
        Tensor cpu = Tensor::empty({count}, dtype);
        Tensor gpu = Tensor::empty({count}, dtype, Device::cuda());
        fill_normal(cpu, cpu_generator, parameters.mean, parameters.stddev);
        fill_normal(gpu, gpu_generator, parameters.mean, parameters.stddev);
        CHECK(gpu_generator.offset() == cpu_generator.offset());
        const UlpReport report = compare_ulp(gpu, cpu);
        std::printf("fill_normal(%g, %g) %s n=%lld: %lld elements differ, worst %lld ulp\n", parameters.mean,
                    parameters.stddev, std::string(dtype_name(dtype)).c_str(), static_cast<long long>(count),
                    static_cast<long long>(report.differing), static_cast<long long>(report.worst));
        INFO(dtype_name(dtype) << " n=" << count << ": " << report.differing << " differ, worst " << report.worst
                               << " ulp");
        CHECK(report.worst <= (dtype == DType::f64 ? 8 : 1));
      }
    }
  }
}

TEST_CASE("random fills of strided GPU views write the CPU's row-major stream", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  Generator g1(5), g2(5);
  Tensor base_cpu = Tensor::zeros({4, 6});
  Tensor base_gpu = Tensor::zeros({4, 6}, DType::f32, Device::cuda());
  Tensor view_cpu = base_cpu.transpose(0, 1);
  Tensor view_gpu = base_gpu.transpose(0, 1);
  fill_uniform(view_cpu, g1);
  fill_uniform(view_gpu, g2);
  testing::require_close(base_gpu, base_cpu, 0, 0, "strided uniform");
  Tensor slice_cpu = Tensor::zeros({5, 9}, DType::f64).slice(1, 2, 7);
  Tensor slice_gpu = Tensor::zeros({5, 9}, DType::f64, Device::cuda()).slice(1, 2, 7);
  fill_normal(slice_cpu, g1);
  fill_normal(slice_gpu, g2);
  CHECK(compare_ulp(slice_gpu, slice_cpu).worst <= 8);
  Tensor ids = Tensor::zeros({3}, DType::i64, Device::cuda());
  CHECK_THROWS_WITH(fill_uniform(ids, g1), Catch::Contains("floating-point"));
}
