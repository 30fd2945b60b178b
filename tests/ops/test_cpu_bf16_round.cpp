// The bf16 GEMM's rounding of its operands (ops/cpu/bf16_round.h): the plain functions against the rule written
// out here, and the vcvtne2ps2bf16 ones against the plain, bit for bit, on values that reach every case (zeros,
// subnormals, the largest subnormal, ties, values that round to infinity, infinities, nans with low payloads), for
// run lengths on both sides of 16 and 32, odd and even, with and without an odd run.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/random.h"
#include "ops/cpu/bf16_round.h"
#include "ops/cpu/gemm_bf16.h"
#include "tests/skip.h"

namespace {

using agf::ops::cpu::bf16_bits;

// n floats, a third of them from the special cases above and the rest uniform over all bit patterns.
std::vector<float> awkward_floats(int64_t n, uint64_t seed) {
  const std::vector<uint32_t> special = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x007fffffu, 0x00800000u,
                                         0x3f808000u, 0x3f818000u, 0x3f808001u, 0x7f7f8000u, 0x7f7fffffu, 0x7f800000u,
                                         0xff800000u, 0x7f800001u, 0xffc00001u, 0x7f80ffffu};
  agf::Generator generator(seed);
  const std::vector<double> draws = agf::uniform({2 * n}, generator, 0, 1, agf::DType::f64).to_double_vector();
  std::vector<float> values(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto pick = static_cast<std::size_t>(draws[2 * i] * 3 * special.size());
    const auto bits = static_cast<uint32_t>(draws[2 * i + 1] * 4294967296.0);
    values[i] = std::bit_cast<float>(pick < special.size() ? special[pick] : bits);
  }
  return values;
}

}  // namespace

TEST_CASE("bf16(x): a subnormal is a zero of its sign, else rounded to nearest even, nan quiet", "[ops][bf16]") {
  CHECK(bf16_bits(1.0f) == 0x3f80u);
  CHECK(bf16_bits(std::bit_cast<float>(0x3f808000u)) == 0x3f80u);  // a tie, to the even 1
  CHECK(bf16_bits(std::bit_cast<float>(0x3f818000u)) == 0x3f82u);  // a tie, to the even above
  CHECK(bf16_bits(std::bit_cast<float>(0x3f808001u)) == 0x3f81u);  // above the tie
  CHECK(bf16_bits(std::bit_cast<float>(0x007fffffu)) == 0x0000u);  // the largest subnormal: zero, not 0x0080
  CHECK(bf16_bits(std::bit_cast<float>(0x807fffffu)) == 0x8000u);
  CHECK(bf16_bits(std::bit_cast<float>(0x00800000u)) == 0x0080u);  // the smallest normal stays
  CHECK(bf16_bits(std::bit_cast<float>(0x7f7fffffu)) == 0x7f80u);  // FLT_MAX rounds to infinity
  CHECK(bf16_bits(std::numeric_limits<float>::infinity()) == 0x7f80u);
  CHECK(bf16_bits(std::bit_cast<float>(0x7f800001u)) == 0x7fc0u);  // a signalling nan made quiet, still a nan
  CHECK(bf16_bits(std::bit_cast<float>(0xff80ffffu)) == 0xffc0u);
}

TEST_CASE("the runs of pair words: plain functions spell the rule out, odd lengths and a missing odd run",
          "[ops][bf16]") {
  const std::vector<float> x = awkward_floats(7, 3), y = awkward_floats(7, 4);
  std::vector<uint32_t> words(5, 0xdeadbeefu);
  agf::ops::cpu::round_run(x.data(), 7, words.data());
  for (int p = 0; p < 3; ++p) CHECK(words[p] == (bf16_bits(x[2 * p]) | uint32_t(bf16_bits(x[2 * p + 1])) << 16));
  CHECK(words[3] == bf16_bits(x[6]));  // the odd depth's last upper half is zero
  CHECK(words[4] == 0xdeadbeefu);      // nothing past the run
  std::vector<uint32_t> pairs(8, 0xdeadbeefu);
  agf::ops::cpu::round_pairs(x.data(), y.data(), 7, pairs.data());
  for (int l = 0; l < 7; ++l) CHECK(pairs[l] == (bf16_bits(x[l]) | uint32_t(bf16_bits(y[l])) << 16));
  agf::ops::cpu::round_pairs(x.data(), nullptr, 7, pairs.data());
  for (int l = 0; l < 7; ++l) CHECK(pairs[l] == bf16_bits(x[l]));
  CHECK(pairs[7] == 0xdeadbeefu);
}

TEST_CASE("the vcvtne2ps2bf16 runs equal the plain ones bit for bit", "[ops][bf16][avx512bf16]") {
  if (!agf::ops::cpu::bf16_avx512_supported()) {
    AGF_SKIP("this processor has no AVX512-BF16 (vcvtne2ps2bf16); the functions are compiled but cannot run here");
  }
  const std::vector<float> x = awkward_floats(9000, 5), y = awkward_floats(9000, 6);
  for (const int64_t n : {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 257, 8197}) {
    INFO("n " << n);
    const int64_t run_words = (n + 1) / 2;
    std::vector<uint32_t> plain(static_cast<std::size_t>(n + 1), 0xdeadbeefu), fast = plain;
    agf::ops::cpu::round_run(x.data(), n, plain.data());
    agf::ops::cpu::round_run_avx512(x.data(), n, fast.data());
    CHECK(fast == plain);
    CHECK(fast[run_words] == 0xdeadbeefu);
    for (const float* odd : {y.data(), static_cast<const float*>(nullptr)}) {
      std::fill(plain.begin(), plain.end(), 0xdeadbeefu);
      std::fill(fast.begin(), fast.end(), 0xdeadbeefu);
      agf::ops::cpu::round_pairs(x.data(), odd, n, plain.data());
      agf::ops::cpu::round_pairs_avx512(x.data(), odd, n, fast.data());
      CHECK(fast == plain);
      CHECK(fast[n] == 0xdeadbeefu);
    }
  }
}
