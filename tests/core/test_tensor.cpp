#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/tensor.h"

using agf::DType;
using agf::Shape;
using agf::Tensor;

TEST_CASE("factories fill, shape and describe tensors", "[core][tensor]") {
  const Tensor z = Tensor::zeros({2, 3});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.strides() == agf::Strides{3, 1});
  CHECK(z.numel() == 6);
  CHECK(z.is_contiguous());
  CHECK(z.description() == "f32[2, 3] on cpu");
  CHECK(Tensor::full({2}, 2.5, DType::f64).to_double_vector() == std::vector<double>{2.5, 2.5});
  CHECK(Tensor::arange(4, DType::i64).to_int_vector() == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(Tensor::scalar(7.0).dim() == 0);
  CHECK(Tensor::scalar(7.0).item() == 7.0);
  CHECK_FALSE(Tensor().defined());
  CHECK(Tensor::empty({0, 4}).numel() == 0);
  CHECK_THROWS_WITH(Tensor::from_vector(std::vector<double>{1, 2, 3}, {2, 2}),
                    Catch::Contains("do not fill shape [2, 2]"));
}

TEST_CASE("element and byte counts that overflow 64 bits are refused, not wrapped", "[core][tensor][errors]") {
  const int64_t two_to_62 = int64_t{1} << 62;
  CHECK(agf::shape_numel({two_to_62}) == two_to_62);
  CHECK(agf::shape_numel({two_to_62, 0}) == 0);
  CHECK_THROWS_WITH(agf::shape_numel({two_to_62, 4}),
                    Catch::Contains("[4611686018427387904, 4]") && Catch::Contains("does not fit in 64 bits"));
  CHECK(agf::shape_bytes({3, 5}, 4) == 60);
  // 2^62 f32 elements are 2^64 bytes: wrapped, that was 0 bytes.
  CHECK_THROWS_WITH(agf::shape_bytes({two_to_62}, 4), Catch::Contains("do not fit in 64 bits"));
  CHECK_THROWS_WITH(Tensor::empty({two_to_62}, DType::f32), Catch::Contains("do not fit in 64 bits"));
}

TEST_CASE("views share storage and copy nothing", "[core][tensor]") {
  Tensor t = Tensor::from_vector(std::vector<double>{0, 1, 2, 3, 4, 5}, {2, 3}, DType::f64);
  SECTION("reshape of contiguous data is a view") {
    Tensor r = t.reshape({3, 2});
    CHECK(r.storage() == t.storage());
    r.data<double>()[0] = 42;
    CHECK(t.to_double_vector()[0] == 42);
  }
  SECTION("transpose swaps strides and is not contiguous") {
    const Tensor tt = t.transpose(0, 1);
    CHECK(tt.shape() == Shape{3, 2});
    CHECK(tt.strides() == agf::Strides{1, 3});
    CHECK_FALSE(tt.is_contiguous());
    CHECK(tt.to_double_vector() == std::vector<double>{0, 3, 1, 4, 2, 5});
    const Tensor c = tt.contiguous();
    CHECK(c.is_contiguous());
    CHECK(c.storage() != t.storage());
    CHECK(c.to_double_vector() == tt.to_double_vector());
  }
  SECTION("slice with a step, select, and negative indices") {
    CHECK(t.slice(1, 0, 3, 2).to_double_vector() == std::vector<double>{0, 2, 3, 5});
    CHECK(t.slice(1, -2, 3).to_double_vector() == std::vector<double>{1, 2, 4, 5});
    CHECK(t.select(0, 1).to_double_vector() == std::vector<double>{3, 4, 5});
    CHECK(t.select(1, -1).shape() == Shape{2});
  }
  SECTION("expand broadcasts with stride 0") {
    const Tensor column = t.slice(1, 0, 1);  // [2, 1]
    const Tensor e = column.expand({2, 2, 3});
    CHECK(e.strides()[2] == 0);
    CHECK(e.to_double_vector() == std::vector<double>{0, 0, 0, 3, 3, 3, 0, 0, 0, 3, 3, 3});
    CHECK_THROWS_WITH(t.expand({2, 4}), Catch::Contains("cannot expand"));
  }
  SECTION("a transposed tensor can be viewed where its axes stay together, else reshape copies") {
    const Tensor three = Tensor::arange(24, DType::f64).reshape({2, 3, 4});
    const Tensor permuted = three.permute({1, 2, 0});  // [3, 4, 2], axes 1 and 2 still adjacent in memory
    const Tensor merged = permuted.view({12, 2});
    CHECK(merged.storage() == three.storage());
    CHECK(merged.to_double_vector() == permuted.contiguous().view({12, 2}).to_double_vector());
    CHECK_THROWS_WITH(three.transpose(0, 2).view({24}), Catch::Contains("without a copy"));
    const Tensor flat = three.transpose(0, 2).reshape({24});
    CHECK(flat.to_double_vector() == three.transpose(0, 2).contiguous().to_double_vector());
  }
  SECTION("unsqueeze, squeeze and -1 in reshape") {
    CHECK(t.unsqueeze(0).shape() == Shape{1, 2, 3});
    CHECK(t.unsqueeze(-1).shape() == Shape{2, 3, 1});
    CHECK(t.unsqueeze(1).squeeze(1).shape() == Shape{2, 3});
    CHECK(t.reshape({-1}).shape() == Shape{6});
    CHECK(t.reshape({3, -1}).shape() == Shape{3, 2});
    CHECK_THROWS_WITH(t.squeeze(0), Catch::Contains("not 1"));
    CHECK_THROWS_WITH(t.reshape({4, -1}), Catch::Contains("cannot infer"));
    CHECK_THROWS_WITH(t.reshape({5}), Catch::Contains("cannot view"));
  }
  SECTION("as_strided refuses views outside the storage") {
    CHECK_THROWS_WITH(t.as_strided({4}, {2}, 0), Catch::Contains("outside storage"));
    CHECK(t.as_strided({3}, {2}, 0).to_double_vector() == std::vector<double>{0, 2, 4});
  }
}

TEST_CASE("dtype conversion rounds to nearest even and keeps specials", "[core][dtype]") {
  SECTION("f16 round trip of exactly representable values") {
    const std::vector<double> values{0.0,           -0.0, 1.0, -2.5, 65504.0, 6.103515625e-05, 5.960464477539063e-08,
                                     0.333251953125};
    const Tensor h = Tensor::from_vector(values, {8}, DType::f64).to(DType::f16);
    CHECK(h.dtype() == DType::f16);
    CHECK(h.to(DType::f64).to_double_vector() == values);
  }
  SECTION("f16 rounding, overflow and nan") {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.
    CHECK(static_cast<float>(agf::Half(1.0f + 0x1p-11f)) == 1.0f);
    CHECK(static_cast<float>(agf::Half(1.0f + 3 * 0x1p-11f)) == 1.0f + 0x1p-9f);
    CHECK(std::isinf(static_cast<float>(agf::Half(65520.0f))));
    CHECK(static_cast<float>(agf::Half(65519.0f)) == 65504.0f);
    CHECK(std::isnan(static_cast<float>(agf::Half(std::numeric_limits<float>::quiet_NaN()))));
    CHECK(static_cast<float>(agf::Half(1e-9f)) == 0.0f);  // underflows to zero
  }
  SECTION("bf16 keeps the float exponent and 8 significant bits") {
    CHECK(static_cast<float>(agf::BFloat16(1.0f + 0x1p-8f)) == 1.0f);  // tie -> even
    CHECK(static_cast<float>(agf::BFloat16(1.0f + 3 * 0x1p-8f)) == 1.0f + 0x1p-6f);
    CHECK(static_cast<float>(agf::BFloat16(3.0e38f)) == Approx(3.0e38f).epsilon(0.01));
    const Tensor b = Tensor::from_vector(std::vector<double>{1.5, -1024}, {2}).to(DType::bf16);
    CHECK(b.to_double_vector() == std::vector<double>{1.5, -1024});
  }
  SECTION("f64 to f16/bf16 rounds through f32 (the GPU's casts and fills follow this)") {
    // 1 + 2^-11 + 2^-40 lies just above an f16 tie: rounded once it is 1 + 2^-10, but f32 drops the
    // 2^-40, leaving the tie 1 + 2^-11, which rounds to even: 1. Likewise for bf16 at 1 + 2^-8 + 2^-40.
    const Tensor x = Tensor::from_vector(std::vector<double>{1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40}, {2});
    CHECK(x.to(DType::f16).to_double_vector()[0] == 1.0);
    CHECK(x.to(DType::bf16).to_double_vector()[1] == 1.0);
    Tensor filled = Tensor::empty({1}, DType::f16);
    filled.fill(1 + 0x1p-11 + 0x1p-40);
    CHECK(filled.item() == 1.0);
  }
  SECTION("integers convert by truncation and back") {
    const Tensor f = Tensor::from_vector(std::vector<double>{1.9, -2.2, 3}, {3});
    CHECK(f.to(DType::i32).to_int_vector() == std::vector<int64_t>{1, -2, 3});
    CHECK(f.to(DType::i64).to(DType::f64).to_double_vector() == std::vector<double>{1, -2, 3});
  }
  CHECK(agf::parse_dtype("bfloat16") == DType::bf16);
  CHECK_THROWS_WITH(agf::parse_dtype("f8"), Catch::Contains("unknown dtype 'f8'"));
}

TEST_CASE("copy_from broadcasts and converts, data<T> checks the dtype", "[core][tensor]") {
  Tensor destination = Tensor::zeros({2, 3}, DType::f64);
  destination.copy_from(Tensor::from_vector(std::vector<double>{1, 2, 3}, {3}));
  CHECK(destination.to_double_vector() == std::vector<double>{1, 2, 3, 1, 2, 3});
  Tensor window = destination.slice(1, 1, 2);
  window.fill(9);
  CHECK(destination.to_double_vector() == std::vector<double>{1, 9, 3, 1, 9, 3});
  CHECK_THROWS_WITH(destination.data<float>(), Catch::Contains("data<f32>() on a tensor of dtype f64"));
  CHECK_THROWS_WITH(destination.item(), Catch::Contains("has 6 elements"));
  CHECK_THROWS_WITH(destination.to(agf::Device::cuda()), Catch::Contains("CUDA"));
}
