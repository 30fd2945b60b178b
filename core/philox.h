#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a counter-based
// generator. Output = bijection(counter, key) after 10 rounds, so any element of a random stream can be
// computed independently — the same stream on CPU threads and CUDA threads, with nothing stored.
//
// agf's convention (used by every random fill and by dropout, on every device):
//   key      = (seed low 32 bits, seed high 32 bits)
//   counter  = (block low 32, block high 32, 0, 0) with block = offset + element / 4
//   element e takes lane e % 4 of its block's output.
#include <array>
#include <cstdint>

#include "core/host_device.h"

namespace agf {

struct Philox4x32 {
  using Block = std::array<uint32_t, 4>;

  static constexpr uint32_t kMultiplier0 = 0xD2511F53u;
  static constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
  static constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
  static constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

  AGF_HOST_DEVICE static Block generate(Block counter, uint32_t key0, uint32_t key1) {
    for (int round = 0; round < 10; ++round) {
      const uint64_t product0 = static_cast<uint64_t>(kMultiplier0) * counter[0];
      const uint64_t product1 = static_cast<uint64_t>(kMultiplier1) * counter[2];
      const uint32_t hi0 = static_cast<uint32_t>(product0 >> 32), lo0 = static_cast<uint32_t>(product0);
      const uint32_t hi1 = static_cast<uint32_t>(product1 >> 32), lo1 = static_cast<uint32_t>(product1);
      counter = {hi1 ^ counter[1] ^ key0, lo1, hi0 ^ counter[3] ^ key1, lo0};
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    return counter;
  }

  // The 32 random bits of element `element` of the stream (seed, offset).
  AGF_HOST_DEVICE static uint32_t bits(uint64_t seed, uint64_t offset, uint64_t element) {
    const uint64_t block = offset + element / 4;
    const Block out = generate({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u},
                               static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
    return out[element % 4];
  }
};

// A uniform float in [0, 1) from 32 random bits (24 significant bits, exactly representable).
AGF_HOST_DEVICE inline float uniform_from_bits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

// A uniform double in (0, 1] from 32 random bits, safe to take the log of (for Box–Muller).
AGF_HOST_DEVICE inline double open_uniform_from_bits(uint32_t bits) {
  return (static_cast<double>(bits) + 1.0) * (1.0 / 4294967296.0);
}

}  // namespace agf
