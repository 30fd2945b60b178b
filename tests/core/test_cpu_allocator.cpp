// The CPU caching allocator (core/storage.h): large blocks come back from the cache, small ones never
// enter it, and the cache empties on request.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "core/storage.h"
#include "core/tensor.h"

TEST_CASE("freed large CPU blocks are reused, small ones are not cached", "[core][storage]") {
  agf::cpu_release_cached();
  const std::size_t large = agf::kCpuCachedBlock * 3 + 100;
  void* first = agf::cpu_allocate(large);
  REQUIRE(first != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(first) % 64 == 0);
  agf::cpu_free(first, large);
  CHECK(agf::cpu_cached_bytes() >= large);
  void* second = agf::cpu_allocate(large);
  CHECK(second == first);  // the same block, no fresh pages
  CHECK(agf::cpu_cached_bytes() == 0);
  // A different size does not take it: blocks are reused only for their own (rounded) size.
  agf::cpu_free(second, large);
  void* other = agf::cpu_allocate(large * 2);
  CHECK(other != first);
  agf::cpu_free(other, large * 2);

  void* small = agf::cpu_allocate(1000);
  agf::cpu_free(small, 1000);
  CHECK(agf::cpu_cached_bytes() >= large * 3);
  const std::size_t held = agf::cpu_cached_bytes();
  CHECK(agf::cpu_release_cached() == held);
  CHECK(agf::cpu_cached_bytes() == 0);
}

TEST_CASE("a tensor on a reused CPU block holds what it is written with, not the last tensor's values",
          "[core][storage]") {
  agf::cpu_release_cached();
  const int64_t n = static_cast<int64_t>(agf::kCpuCachedBlock / sizeof(float)) * 2;
  const void* scratch_block = nullptr;
  {
    const agf::Tensor scratch = agf::Tensor::full({n}, 3.0, agf::DType::f32);
    scratch_block = scratch.data<float>();
  }
  const agf::Tensor zeros = agf::Tensor::zeros({n}, agf::DType::f32);
  REQUIRE(zeros.data<float>() == scratch_block);  // the cache handed the same block back
  const std::vector<double> values = zeros.to_double_vector();
  CHECK(std::all_of(values.begin(), values.end(), [](double v) { return v == 0.0; }));
}
