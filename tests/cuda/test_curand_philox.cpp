// cuRAND's Philox4x32-10 (its real device header, compiled here for the host) draws agf's Philox stream:
// element e of agf's stream (seed, offset) is cuRAND's curand_init(seed, 0, 4·offset + e)
// (core/cuda/curand_philox_mapping.h). These need no GPU: cuRAND's device functions are inline C++ with a
// host branch. The GPU kernels that use them are compared with the CPU in test_dropout_cuda.cpp,
// test_random_cuda.cpp and test_attention_cuda.cpp; the last cases here check the wrappers' range check.
#include <catch2/catch.hpp>

#ifdef AGF_WITH_CUDA
#include <cstdint>
#include <vector>

#include "core/cuda/curand_philox.h"
#include "core/philox.h"
#include "core/random.h"
#include "ops/dropout.h"
#include "tests/cuda/nn_op_compare.h"

using namespace agf;
using cuda::curand_philox_position;
using cuda::curand_philox_range_fits;

namespace {
constexpr uint64_t k2to32 = uint64_t{1} << 32;
constexpr uint64_t kLargestOffset = (uint64_t{1} << 62) - 1;  // 4·offset + 3 = 2^64 - 1

const std::vector<uint64_t> kSeeds{0, 1, 0xffffffffULL, k2to32, 0x0123456789abcdefULL, ~uint64_t{0}};
// Offsets at and around the carries of the block counter's low word (2^32) and of the position's (2^30).
const std::vector<uint64_t> kOffsets{0,
                                     1,
                                     5,
                                     (1ULL << 30) - 1,
                                     1ULL << 30,
                                     k2to32 - 2,
                                     k2to32 - 1,
                                     k2to32,
                                     k2to32 + 1,
                                     (1ULL << 33) - 1,
                                     1ULL << 40,
                                     kLargestOffset - 16,
                                     kLargestOffset};

uint32_t curand_word(uint64_t seed, uint64_t position) {
  curandStatePhilox4_32_10_t state;
  curand_init(seed, 0, position, &state);
  return curand(&state);
}
}  // namespace

TEST_CASE("cuRAND's Philox block function matches the Random123 known-answer vectors", "[cuda][random]") {
  // The philox4x32 10 lines of Random123's kat_vectors (tests/core/test_random.cpp checks agf's Philox on them).
  const uint4 zero = curand_Philox4x32_10(make_uint4(0, 0, 0, 0), make_uint2(0, 0));
  CHECK((zero.x == 0x6627e8d5u && zero.y == 0xe169c58du && zero.z == 0xbc57ac4cu && zero.w == 0x9b00dbd8u));
  const uint4 ones = curand_Philox4x32_10(make_uint4(~0u, ~0u, ~0u, ~0u), make_uint2(~0u, ~0u));
  CHECK((ones.x == 0x408f276du && ones.y == 0x41c83b0eu && ones.z == 0xa20bc7c6u && ones.w == 0x6d5451fdu));
  const uint4 pi = curand_Philox4x32_10(make_uint4(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u),
                                        make_uint2(0xa4093822u, 0x299f31d0u));
  CHECK((pi.x == 0xd16cfe09u && pi.y == 0x94fdccebu && pi.z == 0x5001e420u && pi.w == 0x24126ea1u));
}

TEST_CASE("cuRAND's Philox at position 4·offset + e is agf's Philox4x32::bits(seed, offset, e)", "[cuda][random]") {
  for (uint64_t seed : kSeeds) {
    for (uint64_t offset : kOffsets) {
      for (uint64_t element : std::vector<uint64_t>{0, 1, 2, 3, 4, 7, 1001, 4 * k2to32 + 2}) {
        if (!curand_philox_range_fits(offset, element + 1)) continue;
        INFO("seed " << seed << " offset " << offset << " element " << element);
        CHECK(curand_word(seed, curand_philox_position(offset, element)) == Philox4x32::bits(seed, offset, element));
      }
    }
  }
}

TEST_CASE("one cuRAND state drawn word by word follows agf's stream across counter carries", "[cuda][random]") {
  // curand() advances the state's counter itself: its carry from the low word into the next must be agf's.
  for (uint64_t offset : std::vector<uint64_t>{k2to32 - 3, (1ULL << 33) - 2, kLargestOffset - 10}) {
    const uint64_t seed = 0x9e3779b97f4a7c15ULL;
    curandStatePhilox4_32_10_t state;
    curand_init(seed, 0, curand_philox_position(offset, 1), &state);
    for (uint64_t element = 1; element < 40; ++element) {
      INFO("offset " << offset << " element " << element);
      REQUIRE(curand(&state) == Philox4x32::bits(seed, offset, element));
    }
  }
}

TEST_CASE("CurandPhiloxGroups (the kernels' runs of groups) yields agf's words four at a time", "[cuda][random]") {
  for (uint64_t seed : kSeeds) {
    for (uint64_t offset : std::vector<uint64_t>{0, 17, k2to32 - 2, kLargestOffset - 8}) {
      for (uint64_t first_group : std::vector<uint64_t>{0, 3, 1000}) {
        if (!curand_philox_range_fits(offset, 4 * (first_group + 6))) continue;
        cuda::CurandPhiloxGroups groups(seed, offset, first_group);
        for (uint64_t group = first_group; group < first_group + 6; ++group) {
          const Philox4x32::Block words = groups.next();
          for (uint64_t lane = 0; lane < 4; ++lane) {
            INFO("seed " << seed << " offset " << offset << " group " << group << " lane " << lane);
            CHECK(words[lane] == Philox4x32::bits(seed, offset, 4 * group + lane));
          }
        }
      }
    }
  }
}

TEST_CASE("the mapping holds below 2^62 and the range check refuses what lies beyond", "[cuda][random]") {
  CHECK(curand_philox_range_fits(0, 0));
  CHECK(curand_philox_range_fits(~uint64_t{0}, 0));
  CHECK(curand_philox_range_fits(kLargestOffset, 4));  // positions up to 2^64 - 1
  CHECK_FALSE(curand_philox_range_fits(kLargestOffset, 5));
  CHECK_FALSE(curand_philox_range_fits(kLargestOffset + 1, 1));
  CHECK(curand_philox_range_fits(0, ~uint64_t{0}));
  CHECK_FALSE(curand_philox_range_fits(1, ~uint64_t{0} - 2));
  // Why the check is there: at offset 2^62 the position wraps to 0, and cuRAND draws another block.
  CHECK(curand_word(7, curand_philox_position(kLargestOffset + 1, 0)) != Philox4x32::bits(7, kLargestOffset + 1, 0));
  CHECK_THROWS_WITH(cuda::require_curand_philox_range("dropout", kLargestOffset, 5),
                    Catch::Contains("dropout") && Catch::Contains("beyond cuRAND's 64-bit position"));
  CHECK_NOTHROW(cuda::require_curand_philox_range("dropout", kLargestOffset, 4));
}

TEST_CASE("GPU dropout and fills at the last offsets cuRAND can reach equal the CPU, and refuse beyond",
          "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const uint64_t offset = kLargestOffset - 2;  // 12 elements: positions up to 2^64 - 1
  const Tensor x = testing::random_f64({12}, 3).to(DType::f32);
  testing::require_close(ops::dropout_forward(x.to(Device::cuda()), 0.5, 11, offset),
                         ops::dropout_forward(x, 0.5, 11, offset), 0, 0, "dropout at the last offsets");
  CHECK_THROWS_WITH(ops::dropout_forward(Tensor::zeros({13}, DType::f32, Device::cuda()), 0.5, 11, offset),
                    Catch::Contains("dropout") && Catch::Contains("cuRAND"));
  Generator cpu_generator(5, offset), gpu_generator(5, offset);
  Tensor gpu = Tensor::empty({12}, DType::f32, Device::cuda());
  fill_uniform(gpu, gpu_generator);
  testing::require_close(gpu, uniform({12}, cpu_generator), 0, 0, "fill_uniform at the last offsets");
  Generator beyond(5, offset);
  Tensor too_many = Tensor::empty({13}, DType::f32, Device::cuda());
  CHECK_THROWS_WITH(fill_uniform(too_many, beyond), Catch::Contains("fill_uniform") && Catch::Contains("cuRAND"));
}
#endif  // AGF_WITH_CUDA
