#include <catch2/catch.hpp>

#include <cmath>

#include "core/philox.h"
#include "core/random.h"

using agf::Philox4x32;

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors", "[core][random]") {
  // From Random123's kat_vectors (philox4x32 10 rounds).
  CHECK(Philox4x32::generate({0, 0, 0, 0}, 0, 0) ==
        Philox4x32::Block{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(Philox4x32::generate({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffu, 0xffffffffu) ==
        Philox4x32::Block{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(Philox4x32::generate({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0xa4093822u, 0x299f31d0u) ==
        Philox4x32::Block{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("random fills are reproducible from (seed, offset) and never reuse bits", "[core][random]") {
  agf::Generator first(42), second(42);
  const agf::Tensor a = agf::uniform({1000}, first);
  const agf::Tensor b = agf::uniform({1000}, second);
  CHECK(a.to_double_vector() == b.to_double_vector());
  CHECK(first.offset() == 250);  // 1000 values = 250 blocks of four
  const agf::Tensor c = agf::uniform({1000}, first);
  CHECK(a.to_double_vector() != c.to_double_vector());
  agf::Generator replay(42, 250);
  CHECK(agf::uniform({1000}, replay).to_double_vector() == c.to_double_vector());
  agf::Generator other_seed(43);
  CHECK(agf::uniform({1000}, other_seed).to_double_vector() != a.to_double_vector());
}

TEST_CASE("uniform and normal have the right moments", "[core][random]") {
  agf::Generator generator(7);
  const std::vector<double> u = agf::uniform({200000}, generator, -2.0, 4.0, agf::DType::f64).to_double_vector();
  double low = 1e9, high = -1e9, total = 0;
  for (double v : u) {
    low = std::min(low, v);
    high = std::max(high, v);
    total += v;
  }
  CHECK(low >= -2.0);
  CHECK(high < 4.0);
  CHECK(total / u.size() == Approx(1.0).margin(0.02));
  const std::vector<double> n = agf::normal({200000}, generator, 3.0, 0.5, agf::DType::f64).to_double_vector();
  double sum = 0, squares = 0;
  for (double v : n) sum += v;
  const double mean = sum / n.size();
  for (double v : n) squares += (v - mean) * (v - mean);
  CHECK(mean == Approx(3.0).margin(0.01));
  CHECK(std::sqrt(squares / n.size()) == Approx(0.5).margin(0.01));
}

TEST_CASE("a fill of a strided view writes the same stream as a contiguous fill", "[core][random]") {
  agf::Generator g1(5), g2(5);
  agf::Tensor base = agf::Tensor::zeros({4, 6});
  agf::Tensor view = base.transpose(0, 1);  // [6, 4], not contiguous
  agf::fill_uniform(view, g1);
  const agf::Tensor reference = agf::uniform({6, 4}, g2);
  CHECK(view.to_double_vector() == reference.to_double_vector());
  agf::Tensor ids = agf::Tensor::zeros({3}, agf::DType::i64);
  CHECK_THROWS_WITH(agf::fill_uniform(ids, g1), Catch::Contains("floating-point"));
}
