// `--precision bf16` on the CPU (docs/mixed-precision.md): f32 tensors, bf16 operands in every matrix product.
// The trainer runs in-process with the portable bf16 kernel forced, so that these run on any processor (the
// agf program never forces it; tests/tools/test_cli_bench.cpp and test_training_cli.cpp check its refusal
// where there is no bf16 arithmetic).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "ops/cpu/gemm_bf16.h"
#include "ops/cpu/matmul_precision.h"
#include "tests/data/scratch_dir.h"
#include "tests/train/tiny_fixture.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using agf::test::train_losses;
using agf::train::Precision;

namespace {

agf::train::TrainOptions tiny_options(const std::string& data, const std::string& run, Precision precision) {
  agf::train::TrainOptions options;
  options.data_dir = data;
  options.out_dir = run;
  options.model = agf::nn::TransformerConfig::from_preset("tiny");
  options.model.pos = "agf-m";
  options.model.pcmv = true;
  options.lr = 3e-3;
  options.warmup = 10;
  options.label_smoothing = 0;
  options.bleu_sentences = 0;
  options.quiet = true;
  options.precision = precision;
  return options;
}

}  // namespace

TEST_CASE("bf16 on the CPU trains the tiny fixture as f32 does", "[train][mixed-precision][bf16]") {
  const agf::ops::cpu::ForceBf16Kernel portable(agf::ops::cpu::Bf16Kernel::portable);
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  constexpr int64_t kSteps = 60;
  auto f32 = tiny_options(data, scratch.file("f32"), Precision::fp32);
  auto bf16 = tiny_options(data, scratch.file("bf16"), Precision::bf16);
  f32.max_steps = bf16.max_steps = kSteps;
  f32.valid_every = bf16.valid_every = kSteps;
  const agf::train::TrainSummary f32_summary = agf::train::train(f32);
  const agf::train::TrainSummary bf16_summary = agf::train::train(bf16);
  CHECK(agf::ops::cpu::matmul_precision() == agf::ops::cpu::MatmulPrecision::f32);  // the run's scope ended
  const auto f32_losses = train_losses(f32.out_dir), bf16_losses = train_losses(bf16.out_dir);
  REQUIRE(f32_losses.size() == kSteps);
  REQUIRE(bf16_losses.size() == kSteps);
  const double first_f32 = f32_losses.at(1), first_bf16 = bf16_losses.at(1);
  const double last_f32 = f32_losses.at(kSteps), last_bf16 = bf16_losses.at(kSteps);
  INFO("loss at step 1: f32 " << first_f32 << ", bf16 " << first_bf16 << "; at step " << kSteps << ": f32 " << last_f32
                              << ", bf16 " << last_bf16 << "; valid token accuracy f32 " << f32_summary.token_accuracy
                              << "%, bf16 " << bf16_summary.token_accuracy << "%");
  // Step 1 is the same model on the same batch: only the products' operands differ, each rounded by at most
  // u = 2^-8 relatively. The rounding errors are independent and of both signs, so a sum of k products moves
  // by about u·√k of its magnitude, and the loss, an average over tokens, by less: 1e-3 of it leaves a
  // margin of ten over what this run shows (6.48948 → 6.48983, 5e-5).
  CHECK(first_bf16 != first_f32);  // the products did take bf16 operands
  CHECK(std::abs(first_bf16 - first_f32) <= 1e-3 * first_f32);
  // Both learn (the loss falls to well under half its start) and end close. Each step perturbs the
  // parameters by the rounding above; over 60 steps those perturbations add up but training does not
  // amplify them (it converges), so the final losses stay within 2 % (seen: 2.18685 and 2.18673), and the
  // validation token accuracy within 5 points (a token of the fixture's 137 target tokens is 0.7).
  CHECK(last_f32 < 0.5 * first_f32);
  CHECK(last_bf16 < 0.5 * first_bf16);
  CHECK(std::abs(last_bf16 - last_f32) <= 0.02 * last_f32);
  CHECK(std::abs(bf16_summary.token_accuracy - f32_summary.token_accuracy) <= 5.0);
  // The checkpoint says how it was trained, and holds f32 weights as every checkpoint does.
  const auto checkpoint = agf::train::load_checkpoint(bf16_summary.last_checkpoint);
  REQUIRE(checkpoint.state.has_value());
  CHECK(checkpoint.state->precision == "bf16");
  for (const auto& [name, tensor] : checkpoint.file.tensors) {
    INFO(name);
    CHECK(tensor.dtype() == agf::DType::f32);
  }
}

TEST_CASE("a resumed bf16 CPU run computes exactly the losses of an uninterrupted one",
          "[train][resume][mixed-precision][bf16]") {
  const agf::ops::cpu::ForceBf16Kernel portable(agf::ops::cpu::Bf16Kernel::portable);
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  // As the f32 test (test_training_cli.cpp): dropout, several batches per epoch and accumulation, so that
  // every piece of state must survive the checkpoint.
  auto options = [&](const std::string& run, int64_t steps) {
    auto o = tiny_options(data, scratch.file(run), Precision::bf16);
    o.model.dropout = 0.2;
    o.max_tokens = 120;
    o.update_freq = 2;
    o.valid_every = 4;
    o.max_steps = steps;
    return o;
  };
  agf::train::train(options("whole", 12));
  agf::train::train(options("split", 6));
  auto resumed = options("split", 12);
  resumed.resume = true;
  agf::train::train(resumed);
  const auto expected = train_losses(scratch.file("whole")), actual = train_losses(scratch.file("split"));
  REQUIRE(expected.size() == 12);
  REQUIRE(actual.size() == 12);
  for (const auto& [step, loss] : expected) {
    INFO("step " << step);
    CHECK(actual.at(step) == loss);  // bit for bit
  }
}
