// Mixed precision on the CPU: the loss-scaler rules, the master-weight step (with f32 compute copies, and
// with f16 copies as storage: conversion and the optimizer step run on the CPU, only half compute needs a
// GPU), checkpointing of the scaler state, and the autograd cast.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "nn/linear.h"
#include "tests/data/scratch_dir.h"
#include "train/adam.h"
#include "train/checkpoint.h"
#include "train/mixed_precision.h"

using agf::DType;
using agf::Tensor;
using agf::Variable;
using agf::train::LossScaler;
using agf::train::LossScalerOptions;
using agf::train::MixedPrecisionOptimizer;
using agf::train::MixedPrecisionOptions;

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

using NamedParameters = std::vector<std::pair<std::string, Variable>>;

// Two f32 parameters (a vector and a matrix) with fixed values.
NamedParameters two_parameters() {
  return {{"a", Variable(Tensor::from_vector(std::vector<double>{0.5, -1.25, 2.0}, {3}), true)},
          {"b.weight", Variable(Tensor::from_vector(std::vector<double>{1.0, -0.5, 0.25, 3.0}, {2, 2}), true)}};
}

// Gradients of the two parameters, multiplied by `scale`, in `dtype`.
std::vector<Tensor> gradients(double scale, DType dtype, double poison = 0, int64_t poison_at = -1) {
  std::vector<double> a{0.1, -0.2, 0.3}, b{-0.05, 0.4, 0.0, 0.125};
  for (double& g : a) g *= scale;
  for (double& g : b) g *= scale;
  if (poison_at >= 0) b[static_cast<std::size_t>(poison_at)] = poison;
  return {Tensor::from_vector(a, {3}, dtype), Tensor::from_vector(b, {2, 2}, dtype)};
}

void set_gradients(const NamedParameters& parameters, const std::vector<Tensor>& grads) {
  for (std::size_t p = 0; p < parameters.size(); ++p) parameters[p].second.set_grad(grads[p]);
}

std::vector<std::vector<double>> values(const NamedParameters& parameters) {
  std::vector<std::vector<double>> out;
  for (const auto& [name, parameter] : parameters) out.push_back(parameter.data().to_double_vector());
  return out;
}

MixedPrecisionOptions dynamic_options(DType compute, double initial_scale, int64_t growth_interval = 1000) {
  MixedPrecisionOptions options;
  options.compute_dtype = compute;
  options.master_copies = true;
  options.dynamic_loss_scaling = true;
  options.scaler.initial_scale = initial_scale;
  options.scaler.growth_interval = growth_interval;
  return options;
}

}  // namespace

// ---- the loss scaler ----------------------------------------------------------------------------------

TEST_CASE("the loss scale starts at 2^16 and doubles after exactly growth_interval finite steps",
          "[mixed-precision][scaler]") {
  CHECK(LossScaler(LossScalerOptions{}).scale() == 65536.0);
  LossScalerOptions options;
  options.growth_interval = 3;
  LossScaler scaler(options);
  CHECK(scaler.update(true));
  CHECK(scaler.update(true));
  CHECK(scaler.scale() == 65536.0);  // 2 of 3
  CHECK(scaler.good_steps() == 2);
  CHECK(scaler.update(true));
  CHECK(scaler.scale() == 131072.0);  // the 3rd
  CHECK(scaler.good_steps() == 0);
  for (int i = 0; i < 3; ++i) scaler.update(true);
  CHECK(scaler.scale() == 262144.0);
  CHECK(scaler.skipped_steps() == 0);
}

TEST_CASE("a non-finite step is skipped, halves the scale and restarts the growth count", "[mixed-precision][scaler]") {
  LossScalerOptions options;
  options.growth_interval = 3;
  LossScaler scaler(options);
  scaler.update(true);
  scaler.update(true);
  CHECK_FALSE(scaler.update(false));
  CHECK(scaler.scale() == 32768.0);
  CHECK(scaler.skipped_steps() == 1);
  CHECK(scaler.good_steps() == 0);
  // Two good steps after the backoff do not reach the interval: the count restarted.
  scaler.update(true);
  scaler.update(true);
  CHECK(scaler.scale() == 32768.0);
  scaler.update(true);
  CHECK(scaler.scale() == 65536.0);
  CHECK_FALSE(scaler.update(false));
  CHECK(scaler.skipped_steps() == 2);
}

TEST_CASE("the loss scale stays within [min_scale, max_scale]", "[mixed-precision][scaler]") {
  LossScalerOptions options;
  options.initial_scale = 4;
  options.growth_interval = 1;
  options.max_scale = 16;
  LossScaler scaler(options);
  for (double expected : {2.0, 1.0, 1.0, 1.0}) {
    CHECK_FALSE(scaler.update(false));
    CHECK(scaler.scale() == expected);  // floor: 1
  }
  CHECK(scaler.skipped_steps() == 4);
  for (double expected : {2.0, 4.0, 8.0, 16.0, 16.0}) {
    scaler.update(true);
    CHECK(scaler.scale() == expected);  // ceiling: max_scale
  }
  CHECK(LossScalerOptions{}.max_scale == 16777216.0);  // 2^24
  CHECK_THROWS_WITH(LossScaler(LossScalerOptions{.initial_scale = 0.5}), Catch::Contains("min_scale"));
}

TEST_CASE("the disabled scaler keeps scale 1 but still skips and counts non-finite steps",
          "[mixed-precision][scaler]") {
  LossScaler scaler = LossScaler::disabled();
  CHECK_FALSE(scaler.enabled());
  CHECK(scaler.scale() == 1.0);
  for (int i = 0; i < 5000; ++i) scaler.update(true);
  CHECK(scaler.scale() == 1.0);
  CHECK_FALSE(scaler.update(false));
  CHECK(scaler.scale() == 1.0);
  CHECK(scaler.skipped_steps() == 1);
}

TEST_CASE("the scaler state round-trips through load_state and checkpoint metadata", "[mixed-precision][scaler]") {
  LossScalerOptions options;
  options.growth_interval = 4;
  LossScaler original(options);
  for (bool finite : {true, false, true, true, false, true, true}) original.update(finite);
  REQUIRE(original.scale() == 16384.0);
  REQUIRE(original.good_steps() == 2);
  REQUIRE(original.skipped_steps() == 2);
  LossScaler restored(options);
  restored.load_state(original.state());
  CHECK(restored.scale() == original.scale());
  CHECK(restored.good_steps() == original.good_steps());
  CHECK(restored.skipped_steps() == original.skipped_steps());
  // Both continue identically: two more good steps reach the interval in each.
  for (int i = 0; i < 2; ++i) {
    original.update(true);
    restored.update(true);
  }
  CHECK(restored.scale() == 32768.0);
  CHECK(original.scale() == 32768.0);

  agf::train::TrainingState state;
  state.step = 9;
  state.precision = "fp16";
  state.loss_scaler = original.state();
  const auto metadata = state.to_metadata();
  CHECK(metadata.at("agf.state.loss_scale") == "32768");
  CHECK(metadata.at("agf.state.skipped_steps") == "2");
  const auto read = agf::train::TrainingState::from_metadata(metadata);
  REQUIRE(read.loss_scaler.has_value());
  CHECK(read.loss_scaler->scale == 32768.0);
  CHECK(read.loss_scaler->good_steps == 0);
  CHECK(read.loss_scaler->skipped_steps == 2);
  CHECK(read.precision == "fp16");
  // Metadata written before mixed precision: an fp32 run without a scaler state.
  auto old = metadata;
  for (const char* key :
       {"agf.state.loss_scale", "agf.state.loss_scale_good_steps", "agf.state.skipped_steps", "agf.state.precision"}) {
    old.erase(key);
  }
  const auto legacy = agf::train::TrainingState::from_metadata(old);
  CHECK_FALSE(legacy.loss_scaler.has_value());
  CHECK(legacy.precision == "fp32");
}

// ---- the master-weight step -----------------------------------------------------------------------------

TEST_CASE("an inf or nan gradient skips the step: masters and compute copies unchanged, scale halved",
          "[mixed-precision]") {
  const NamedParameters model = two_parameters();
  const auto initial = values(model);
  MixedPrecisionOptimizer optimizer(model, dynamic_options(DType::f32, 1024));
  REQUIRE(optimizer.has_master_copies());
  // The masters are copies: their storage is not the model's.
  for (std::size_t p = 0; p < model.size(); ++p) {
    CHECK(optimizer.master_parameters()[p].second.data().storage() != model[p].second.data().storage());
    CHECK(optimizer.master_parameters()[p].first == model[p].first);
  }
  for (const double poison : {infinity, not_a_number}) {
    INFO("poison " << poison);
    set_gradients(model, gradients(optimizer.loss_scale(), DType::f32, poison, 1));
    const double scale_before = optimizer.loss_scale();
    const auto outcome = optimizer.step(1e-2, 0);
    CHECK_FALSE(outcome.applied);
    CHECK_FALSE(std::isfinite(outcome.grad_norm));
    CHECK(outcome.loss_scale == scale_before);
    CHECK(optimizer.loss_scale() == scale_before / 2);
    CHECK(values(model) == initial);
    CHECK(values(optimizer.master_parameters()) == initial);
    CHECK(optimizer.adam().steps() == 0);
    for (const auto& [name, parameter] : model) CHECK_FALSE(parameter.grad().defined());
  }
  CHECK(optimizer.scaler().skipped_steps() == 2);
  CHECK(optimizer.loss_scale() == 256);
}

TEST_CASE("a finite step equals a plain Adam step on the unscaled gradient", "[mixed-precision]") {
  const double clip = GENERATE(0.0, 0.3);  // 0.3 < ‖g‖ ≈ 0.57: the clipped path too
  INFO("clip " << clip);
  const NamedParameters model = two_parameters();
  MixedPrecisionOptimizer optimizer(model, dynamic_options(DType::f32, 1024));
  const NamedParameters plain = two_parameters();
  agf::train::Adam adam(plain);
  std::vector<Variable> plain_variables;
  for (const auto& [name, parameter] : plain) plain_variables.push_back(parameter);
  for (int step = 1; step <= 3; ++step) {
    const double scale = optimizer.loss_scale();
    set_gradients(model, gradients(scale, DType::f32));  // what backward of S·L gives
    const auto outcome = optimizer.step(1e-2, clip);
    set_gradients(plain, gradients(1.0, DType::f32));
    const double plain_norm = agf::train::clip_grad_norm(plain_variables, clip);
    adam.step(1e-2);
    adam.zero_grad();
    CHECK(outcome.applied);
    CHECK(outcome.grad_norm == Approx(plain_norm).epsilon(1e-6));
    const auto expected = values(plain), masters = values(optimizer.master_parameters()), compute = values(model);
    for (std::size_t p = 0; p < expected.size(); ++p) {
      for (std::size_t i = 0; i < expected[p].size(); ++i) {
        CHECK(masters[p][i] == Approx(expected[p][i]).margin(1e-6));
        CHECK(compute[p][i] == masters[p][i]);  // copied back (f32 compute: exactly)
      }
    }
  }
  CHECK(optimizer.adam().steps() == 3);
  CHECK(optimizer.scaler().skipped_steps() == 0);
  CHECK(values(model) != values(two_parameters()));  // it did move
}

TEST_CASE("fp16 compute copies: rounded masters, f16 gradients unscaled in f32, an f16 overflow skipped",
          "[mixed-precision]") {
  // Nothing here computes in f16: the conversions and the f32 step run on the CPU.
  const NamedParameters model = two_parameters();
  MixedPrecisionOptimizer optimizer(model, dynamic_options(DType::f16, 262144));
  for (const auto& [name, parameter] : model) CHECK(parameter.dtype() == DType::f16);
  for (const auto& [name, master] : optimizer.master_parameters()) CHECK(master.dtype() == DType::f32);
  // 65504 is f16's largest value: the largest gradient, 0.4, scaled by 2^18 overflows to inf in f16.
  set_gradients(model, gradients(262144, DType::f16));
  REQUIRE(std::isinf(model[1].second.grad().to_double_vector()[1]));
  CHECK_FALSE(optimizer.step(1e-2, 0).applied);
  CHECK(optimizer.loss_scale() == 131072);
  // At 2^17 every scaled gradient fits; unscaled they equal the f16-rounded gradients.
  const NamedParameters plain = two_parameters();
  agf::train::Adam adam(plain);
  set_gradients(model, gradients(131072, DType::f16));
  const auto outcome = optimizer.step(1e-2, 0);
  CHECK(outcome.applied);
  set_gradients(plain, gradients(1.0, DType::f16));
  for (const auto& [name, parameter] : plain) parameter.set_grad(parameter.grad().to(DType::f32));
  std::vector<Variable> plain_variables;
  for (const auto& [name, parameter] : plain) plain_variables.push_back(parameter);
  CHECK(outcome.grad_norm == Approx(agf::train::clip_grad_norm(plain_variables, 0)).epsilon(1e-7));  // unscaled
  adam.step(1e-2);
  const auto expected = values(plain), masters = values(optimizer.master_parameters()), compute = values(model);
  for (std::size_t p = 0; p < expected.size(); ++p) {
    for (std::size_t i = 0; i < expected[p].size(); ++i) {
      CHECK(masters[p][i] == Approx(expected[p][i]).margin(1e-6));
      // h = f16(θ): within half an f16 ulp (2^-11 relative).
      CHECK(compute[p][i] == Approx(masters[p][i]).epsilon(std::ldexp(1.0, -11)));
      CHECK(compute[p][i] == static_cast<double>(static_cast<float>(agf::Half(static_cast<float>(masters[p][i])))));
    }
  }
}

TEST_CASE("fp32 precision keeps no copies and steps exactly as clip + Adam", "[mixed-precision]") {
  const NamedParameters model = two_parameters();
  MixedPrecisionOptimizer optimizer(model, agf::train::mixed_precision_options(agf::train::Precision::fp32,
                                                                               agf::Device::cpu()));
  CHECK_FALSE(optimizer.has_master_copies());
  CHECK_FALSE(optimizer.scaler().enabled());
  CHECK(optimizer.loss_scale() == 1.0);
  for (std::size_t p = 0; p < model.size(); ++p)
    CHECK(optimizer.master_parameters()[p].second.state() == model[p].second.state());
  const NamedParameters plain = two_parameters();
  agf::train::Adam adam(plain);
  std::vector<Variable> plain_variables;
  for (const auto& [name, parameter] : plain) plain_variables.push_back(parameter);
  for (int step = 0; step < 3; ++step) {
    set_gradients(model, gradients(1.0, DType::f32));
    optimizer.step(1e-2, 0.3);
    set_gradients(plain, gradients(1.0, DType::f32));
    agf::train::clip_grad_norm(plain_variables, 0.3);
    adam.step(1e-2);
    adam.zero_grad();
    CHECK(values(model) == values(plain));  // bit for bit
  }
  // A nan gradient is skipped even at fp32, and the scale stays 1.
  const auto before = values(model);
  set_gradients(model, gradients(1.0, DType::f32, not_a_number, 0));
  CHECK_FALSE(optimizer.step(1e-2, 0).applied);
  CHECK(values(model) == before);
  CHECK(optimizer.loss_scale() == 1.0);
  CHECK(optimizer.scaler().skipped_steps() == 1);
  // On a GPU, half-precision compute copies; bf16 on the CPU keeps f32 parameters (bf16 products) and so
  // steps as fp32.
  const agf::Device gpu = agf::Device::cuda(0), cpu = agf::Device::cpu();
  CHECK(agf::train::mixed_precision_options(agf::train::Precision::bf16, gpu).master_copies);
  CHECK(agf::train::mixed_precision_options(agf::train::Precision::bf16, gpu).compute_dtype == DType::bf16);
  CHECK_FALSE(agf::train::mixed_precision_options(agf::train::Precision::bf16, gpu).dynamic_loss_scaling);
  CHECK(agf::train::mixed_precision_options(agf::train::Precision::fp16, gpu).dynamic_loss_scaling);
  CHECK_FALSE(agf::train::mixed_precision_options(agf::train::Precision::bf16, cpu).master_copies);
  CHECK(agf::train::mixed_precision_options(agf::train::Precision::bf16, cpu).compute_dtype == DType::f32);
  CHECK_FALSE(agf::train::mixed_precision_options(agf::train::Precision::bf16, cpu).dynamic_loss_scaling);
  CHECK_THROWS_WITH(agf::train::parse_precision("fp8"), Catch::Contains("--precision") && Catch::Contains("fp8"));
}

TEST_CASE("a resumed optimizer continues exactly: masters, moments, scale and counters from the checkpoint",
          "[mixed-precision][resume]") {
  agf::test::ScratchDir scratch;
  const std::string path = scratch.file("step.safetensors");
  agf::nn::TransformerConfig config = agf::nn::TransformerConfig::from_preset("tiny");
  config.vocabulary_size = 10;
  // Steps: finite, inf (skipped), finite, finite; growth every 2 good steps.
  const auto run = [](MixedPrecisionOptimizer& optimizer, const NamedParameters& model, bool finite) {
    set_gradients(model, gradients(optimizer.loss_scale(), DType::f32, finite ? 0.0 : infinity, finite ? -1 : 2));
    optimizer.step(1e-2, 0);
  };
  const NamedParameters whole_model = two_parameters();
  MixedPrecisionOptimizer whole(whole_model, dynamic_options(DType::f32, 1024, 2));
  for (bool finite : {true, false, true, true, true, true}) run(whole, whole_model, finite);

  const NamedParameters first_model = two_parameters();
  MixedPrecisionOptimizer first(first_model, dynamic_options(DType::f32, 1024, 2));
  for (bool finite : {true, false, true}) run(first, first_model, finite);
  REQUIRE(first.scaler().good_steps() == 1);  // mid-interval: the counter must survive too
  agf::train::TrainingState state;
  state.step = 3;
  state.precision = "fp16";
  state.loss_scaler = first.scaler().state();
  agf::train::save_checkpoint(path, first.master_parameters(), config, "", &first.adam(), &state);

  const auto checkpoint = agf::train::load_checkpoint(path);
  REQUIRE(checkpoint.state.has_value());
  REQUIRE(checkpoint.state->loss_scaler.has_value());
  NamedParameters resumed_model = two_parameters();
  for (auto& [name, parameter] : resumed_model) {
    const Tensor* saved = checkpoint.file.find(name);
    REQUIRE(saved != nullptr);
    CHECK(saved->dtype() == DType::f32);
    parameter.mutable_data().copy_from(*saved);
  }
  MixedPrecisionOptimizer resumed(resumed_model, dynamic_options(DType::f32, 1024, 2));
  resumed.load_state(agf::train::optimizer_state(checkpoint), checkpoint.state->step, *checkpoint.state->loss_scaler);
  CHECK(resumed.loss_scale() == first.loss_scale());
  CHECK(resumed.scaler().good_steps() == 1);
  CHECK(resumed.scaler().skipped_steps() == 1);
  CHECK(resumed.adam().steps() == 2);  // 3 steps taken, 1 skipped
  for (bool finite : {true, true, true}) run(resumed, resumed_model, finite);
  CHECK(resumed.loss_scale() == whole.loss_scale());
  CHECK(resumed.scaler().state().good_steps == whole.scaler().state().good_steps);
  CHECK(values(resumed.master_parameters()) == values(whole.master_parameters()));
  CHECK(values(resumed_model) == values(whole_model));
}

// ---- device and dtype plumbing --------------------------------------------------------------------------

TEST_CASE("Module::to(DType) converts parameters inside their Variables", "[mixed-precision][module]") {
  agf::Generator generator(3);
  agf::nn::Linear linear(3, 2, generator);
  const auto before = linear.named_parameters();
  const Variable held = before[0].second;  // whoever holds a Variable sees the converted data
  linear.to(DType::bf16);
  CHECK(held.dtype() == DType::bf16);
  CHECK(linear.named_parameters()[1].second.dtype() == DType::bf16);
  CHECK(linear.device() == agf::Device::cpu());
  linear.to(agf::Device::cpu());  // already there: nothing to do
  CHECK_THROWS_WITH(linear.to(DType::i64), Catch::Contains("floating"));
}

TEST_CASE("cast: f32 loss from f64 logits and the gradient back in the input's dtype", "[mixed-precision][autograd]") {
  const Variable x(Tensor::from_vector(std::vector<double>{1.0, 2.0, 3.0}, {3}, DType::f64), true);
  CHECK(agf::cast(x, DType::f64).state() == x.state());  // the identity: no node, no copy
  const Variable narrow = agf::cast(x, DType::f32);
  CHECK(narrow.dtype() == DType::f32);
  agf::sum(narrow * narrow).backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().dtype() == DType::f64);
  CHECK(x.grad().to_double_vector() == std::vector<double>{2.0, 4.0, 6.0});
  const auto* check = agf::find_op_check("cast");
  REQUIRE(check != nullptr);
  CHECK(check->run().passed);
}
