// The word transpose of the bf16 GEMM's packing (ops/cpu/word_transpose.h): the plain loop against its
// definition, and the AVX-512 version against the plain loop, for every lane count, counts with and without
// a partial last block of 16, and strides wider than the extents; the words the transpose must not write keep
// a sentinel.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "ops/cpu/gemm_bf16.h"
#include "ops/cpu/word_transpose.h"
#include "tests/skip.h"

using agf::ops::cpu::kWordTransposeLanes;

namespace {

constexpr uint32_t kSentinel = 0xdeadbeefu;

struct Block {
  int64_t lanes, count, in_stride, out_stride;
  std::vector<uint32_t> in;

  Block(int64_t lanes_, int64_t count_) : lanes(lanes_), count(count_), in_stride(count_ + 3), out_stride(lanes_ + 5) {
    in.resize(static_cast<std::size_t>(lanes * in_stride));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u + 12345u);
  }

  template <class Transpose>
  std::vector<uint32_t> run(Transpose transpose) const {
    std::vector<uint32_t> out(static_cast<std::size_t>(count * out_stride + 7), kSentinel);
    transpose(in.data(), in_stride, lanes, count, out.data(), out_stride);
    return out;
  }
};

const std::vector<int64_t> kCounts = {1, 2, 7, 15, 16, 17, 31, 32, 33, 128, 129};

}  // namespace

TEST_CASE("transpose_words writes out[p·out_stride + l] = in[l·in_stride + p] and nothing else", "[ops][gemm][bf16]") {
  for (int64_t lanes = 1; lanes <= kWordTransposeLanes; ++lanes) {
    for (const int64_t count : kCounts) {
      INFO("lanes " << lanes << " count " << count);
      const Block block(lanes, count);
      const std::vector<uint32_t> out = block.run(agf::ops::cpu::transpose_words);
      int64_t wrong = 0;
      for (int64_t p = 0; p < count; ++p) {
        for (int64_t l = 0; l < block.out_stride; ++l) {
          const uint32_t expected = l < lanes ? block.in[static_cast<std::size_t>(l * block.in_stride + p)] : kSentinel;
          wrong += out[static_cast<std::size_t>(p * block.out_stride + l)] != expected;
        }
      }
      for (std::size_t i = static_cast<std::size_t>(count * block.out_stride); i < out.size(); ++i) {
        wrong += out[i] != kSentinel;
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("transpose_words_avx512 equals transpose_words word for word", "[ops][gemm][bf16][avx512bf16]") {
  if (!agf::ops::cpu::bf16_avx512_supported()) {
    AGF_SKIP("this processor has no AVX-512 with AVX512-BF16, where the bf16 GEMM uses the AVX-512 transpose");
  }
  for (int64_t lanes = 1; lanes <= kWordTransposeLanes; ++lanes) {
    for (const int64_t count : kCounts) {
      INFO("lanes " << lanes << " count " << count);
      const Block block(lanes, count);
      CHECK(block.run(agf::ops::cpu::transpose_words_avx512) == block.run(agf::ops::cpu::transpose_words));
    }
  }
}
