#pragma once
// The exponentials of softmax-like rows, vectorized: Eigen's generic packet exp (a Cody-Waite reduction and a
// polynomial, within 1 ulp of std::exp, tests/ops/test_vector_exp.cpp) instead of a scalar libm call per
// element, summed in a SIMD accumulator. Used by softmax, log-softmax, cross-entropy and the attention kernel.
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace agf::ops::cpu {

template <class T>
using ConstRow = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// max_i x[i]; -inf for an empty row.
template <class T>
T row_max(const T* x, int64_t length) {
  return length > 0 ? ConstRow<T>(x, length).maxCoeff() : -std::numeric_limits<T>::infinity();
}

// Eigen's SIMD packet of T on this build (8 floats with AVX2, 16 with AVX-512) and its lane count.
template <class T>
using ExpPacket = typename Eigen::internal::packet_traits<T>::type;
template <class T>
inline constexpr int64_t kExpLanes = Eigen::internal::unpacket_traits<ExpPacket<T>>::size;

// exp of each lane. Eigen 3.4's pexp<Packet16f> (AVX-512) subtracts m·ln 2 with a single f32 constant, so
// its error grows with |m| to 4 ulp near the f32 underflow bound (x ≈ -87); the generic pexp_float, which
// AVX2 and SSE builds already use, splits ln 2 in two parts and stays within 1 ulp on every ISA, at about
// twice the (small) cost. f64 uses the generic pexp_double on every ISA already.
template <class Packet>
Packet packet_exp(const Packet& x) {
  if constexpr (std::is_same_v<typename Eigen::internal::unpacket_traits<Packet>::type, float>)
    return Eigen::internal::pexp_float(x);
  else return Eigen::internal::pexp_double(x);
}

// Calls visit(i, e) for each packet of e = exp(x[i..i+lanes) - shift), with exp(-inf) = 0 exactly: Eigen's
// packet exp clamps its argument and returns a denormal (≈ 3e-39 in f32) for -inf, so a masked score would
// get a little probability. The packets are written out with Eigen's packet functions because an Eigen
// expression with .select() is evaluated one scalar at a time (in Eigen 3.4 a select has no packet access),
// which would be a libm call per element. A partial last packet is read into a buffer padded with -inf.
template <class T, class Visit>
void for_each_exp_packet(const T* x, T shift, int64_t length, Visit&& visit) {
  namespace ei = Eigen::internal;
  using Packet = ExpPacket<T>;
  constexpr int64_t lanes = kExpLanes<T>;
  const Packet shift_packet = ei::pset1<Packet>(shift);
  const Packet minus_inf = ei::pset1<Packet>(-std::numeric_limits<T>::infinity());
  const Packet zero = ei::pset1<Packet>(T(0));
  const auto exp_of = [&](const Packet& value) {
    const Packet shifted = ei::psub(value, shift_packet);
    return ei::pselect(ei::pcmp_eq(shifted, minus_inf), zero, packet_exp(shifted));
  };
  int64_t i = 0;
  for (; i + lanes <= length; i += lanes) visit(i, exp_of(ei::ploadu<Packet>(x + i)));
  if (i < length) {
    alignas(64) T tail[lanes];
    for (int64_t lane = 0; lane < lanes; ++lane)
      tail[lane] = i + lane < length ? x[i + lane] : -std::numeric_limits<T>::infinity();
    visit(i, exp_of(ei::pload<Packet>(tail)));
  }
}

// out[i] = exp(x[i] - shift) for i < length, and Σ_i out[i]. `out` may be `x`.
template <class T>
T exp_shifted(const T* x, T shift, T* out, int64_t length) {
  namespace ei = Eigen::internal;
  using Packet = ExpPacket<T>;
  constexpr int64_t lanes = kExpLanes<T>;
  Packet total = ei::pset1<Packet>(T(0));
  for_each_exp_packet(x, shift, length, [&](int64_t i, const Packet& e) {
    total = ei::padd(total, e);  // the padded lanes of a partial packet are exp(-inf) = 0
    if (i + lanes <= length) {
      ei::pstoreu(out + i, e);
    } else {
      alignas(64) T tail[lanes];
      ei::pstore(tail, e);
      for (int64_t lane = 0; i + lane < length; ++lane) out[i + lane] = tail[lane];
    }
  });
  return ei::predux(total);
}

// Σ_i exp(x[i] - shift), nothing stored.
template <class T>
T sum_exp_shifted(const T* x, T shift, int64_t length) {
  namespace ei = Eigen::internal;
  using Packet = ExpPacket<T>;
  Packet total = ei::pset1<Packet>(T(0));
  for_each_exp_packet(x, shift, length, [&](int64_t, const Packet& e) { total = ei::padd(total, e); });
  return ei::predux(total);
}

}  // namespace agf::ops::cpu
