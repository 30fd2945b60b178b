#include "ops/cpu/matmul_precision.h"

namespace agf::ops::cpu {

namespace {
thread_local MatmulPrecision current = MatmulPrecision::f32;
}  // namespace

MatmulPrecision matmul_precision() { return current; }

ScopedMatmulPrecision::ScopedMatmulPrecision(MatmulPrecision precision) : previous_(current) { current = precision; }
ScopedMatmulPrecision::~ScopedMatmulPrecision() { current = previous_; }

}  // namespace agf::ops::cpu
