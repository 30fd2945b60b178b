#pragma once
// Generator: a seed and a running offset into the Philox stream (see philox.h). Each fill consumes
// ceil(n/4) counter blocks, so two fills never reuse random bits and any fill can be replayed from
// its (seed, offset) — which is how dropout regenerates its mask in backward.
#include <cstdint>

#include "core/tensor.h"

namespace agf {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0, uint64_t offset = 0) : seed_(seed), offset_(offset) {}
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  // Reserves counter blocks for `elements` random values; returns the offset they start at.
  uint64_t advance(int64_t elements) {
    const uint64_t start = offset_;
    offset_ += static_cast<uint64_t>((elements + 3) / 4);
    return start;
  }

 private:
  uint64_t seed_;
  uint64_t offset_;
};

// In-place fills of a floating-point tensor (any layout); each advances the generator.
void fill_uniform(Tensor& tensor, Generator& generator, double low = 0.0, double high = 1.0);
// Box–Muller: elements 2i and 2i+1 of the stream give a pair of independent normals.
void fill_normal(Tensor& tensor, Generator& generator, double mean = 0.0, double stddev = 1.0);

Tensor uniform(const Shape& shape, Generator& generator, double low = 0.0, double high = 1.0, DType dtype = DType::f32);
Tensor normal(const Shape& shape, Generator& generator, double mean = 0.0, double stddev = 1.0,
              DType dtype = DType::f32);

}  // namespace agf
