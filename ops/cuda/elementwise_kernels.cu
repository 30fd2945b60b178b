// The CUDA instances of every pointwise functor (ops/elementwise_functors.h): the map kernels of
// ops/cuda/map_kernel.cuh, instantiated once per functor (and inside, per f64/f32/f16/bf16).
#include "ops/cuda/map_kernel.cuh"
#include "ops/elementwise_functors.h"

namespace agf::cuda {

namespace fn = ops::functors;

#define AGF_MAP_INSTANCE(N, F) template void launch_map<N, F>(const F&, DType, const MapOperands<N>&, int64_t, int);

// binary
AGF_MAP_INSTANCE(2, fn::Add)
AGF_MAP_INSTANCE(2, fn::Sub)
AGF_MAP_INSTANCE(2, fn::Mul)
AGF_MAP_INSTANCE(2, fn::Div)
AGF_MAP_INSTANCE(3, fn::DivBackwardDivisor)
// with a scalar
AGF_MAP_INSTANCE(1, fn::AddScalar)
AGF_MAP_INSTANCE(1, fn::MulScalar)
AGF_MAP_INSTANCE(1, fn::RsubScalar)
AGF_MAP_INSTANCE(1, fn::RdivScalar)
AGF_MAP_INSTANCE(1, fn::PowScalar)
AGF_MAP_INSTANCE(2, fn::PowScalarBackward)
// unary
AGF_MAP_INSTANCE(1, fn::Neg)
AGF_MAP_INSTANCE(1, fn::Exp)
AGF_MAP_INSTANCE(1, fn::Log)
AGF_MAP_INSTANCE(1, fn::Sqrt)
AGF_MAP_INSTANCE(1, fn::Tanh)
AGF_MAP_INSTANCE(1, fn::Sigmoid)
AGF_MAP_INSTANCE(1, fn::Relu)
AGF_MAP_INSTANCE(1, fn::GeluTanh)
AGF_MAP_INSTANCE(1, fn::GeluErf)
// backward of the unary ops
AGF_MAP_INSTANCE(2, fn::SqrtBackward)
AGF_MAP_INSTANCE(2, fn::TanhBackward)
AGF_MAP_INSTANCE(2, fn::SigmoidBackward)
AGF_MAP_INSTANCE(2, fn::ReluBackward)
AGF_MAP_INSTANCE(2, fn::GeluTanhBackward)
AGF_MAP_INSTANCE(2, fn::GeluErfBackward)
// backward of max
AGF_MAP_INSTANCE(2, fn::IsMax)
AGF_MAP_INSTANCE(3, fn::ShareAmongTies)

#undef AGF_MAP_INSTANCE

}  // namespace agf::cuda
