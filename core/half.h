#pragma once
// IEEE binary16 (`Half`) and bfloat16 (`BFloat16`) storage types with round-to-nearest-even
// conversion from float. Arithmetic is done in float: these types only hold bits.
#include <bit>
#include <cstdint>

namespace agf {

struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float value) : bits(from_float(value)) {}
  explicit operator float() const { return to_float(bits); }

  // binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
  static uint16_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t magnitude = f & 0x7fffffffu;
    if (magnitude >= 0x7f800000u) {  // inf or nan (nan keeps a quiet payload bit)
      return static_cast<uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
    }
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (magnitude < 0x38800000u) {  // result is subnormal (or zero): value / 2^-24, rounded to even
      const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // exact: 2^24
      // scaled < 1024; nearbyint-like round half to even via the float's own rounding.
      const float rounded = scaled + 8388608.0f - 8388608.0f;  // 2^23 trick
      return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
    }
    // normal: rebias exponent (127 -> 15) and round the 23-bit mantissa to 10 bits, ties to even
    const uint32_t rebased = magnitude - ((127u - 15u) << 23);
    const uint32_t round_bit = (rebased >> 13) & 1u;
    return static_cast<uint16_t>(sign | ((rebased + 0xfffu + round_bit) >> 13));
  }
  static float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
      const float value = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
      return sign ? -value : value;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value) : bits(from_float(value)) {}
  explicit operator float() const { return to_float(bits); }

  // bfloat16 is the top half of a float: round the low 16 bits away, ties to even.
  static uint16_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // quiet nan
    const uint32_t round_bit = (f >> 16) & 1u;
    return static_cast<uint16_t>((f + 0x7fffu + round_bit) >> 16);
  }
  static float to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }
};

}  // namespace agf
