// What a GPU run needs of the framework, proven on the CPU: every tensor a training step, evaluation or
// decoding creates lives on the model's device and has its dtype.
//
// The CPU has a second label, Device::cpu(1): the same host memory, but ops refuse to mix its tensors with
// cpu:0 ones exactly as they refuse to mix CPU and GPU tensors. A model moved there and trained, evaluated
// and decoded therefore fails with "tensors on different devices", naming the op, wherever the code makes a
// tensor without passing the device (Tensor::zeros(shape) defaults to cpu:0) — the mistake that would only
// show on a GPU. Parameters in f64 do the same for dtypes: a constant made in the default f32 meets f64
// and fails with "dtype mismatch", as it would meet bf16 compute copies.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "autograd/functions.h"
#include "data/bpe_codec.h"
#include "nn/transformer.h"
#include "ops/elementwise.h"
#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/adam.h"
#include "train/batch.h"
#include "train/checkpoint.h"
#include "train/decode.h"
#include "train/evaluate.h"
#include "train/mixed_precision.h"
#include "train/sequence_loss.h"
#include "train/trainer.h"

using agf::Device;
using agf::DType;
using agf::Tensor;
using agf::Variable;

namespace {

const Device elsewhere = Device::cpu(1);

}  // namespace

TEST_CASE("cpu:1 is host memory that ops refuse to mix with cpu:0", "[device]") {
  const Tensor a = Tensor::from_vector(std::vector<double>{1, 2, 3}, {3});
  const Tensor b = a.to(elsewhere);
  CHECK(b.device() == elsewhere);
  CHECK(b.storage() != a.storage());
  CHECK(b.description() == "f32[3] on cpu:1");
  CHECK(b.to_double_vector() == std::vector<double>{1, 2, 3});
  CHECK(agf::ops::add(b, b).device() == elsewhere);
  CHECK(b.to(Device::cpu()).device() == Device::cpu());
  CHECK_THROWS_WITH(agf::ops::add(a, b),
                    Catch::Contains("add: tensors on different devices (f32[3] on cpu and f32[3] on cpu:1)"));
}

TEST_CASE("a backward that returns a gradient on another device is refused, naming the op", "[device][autograd]") {
  const Variable x(Tensor::ones({2}, DType::f64, elsewhere), true);
  const Variable y = agf::make_result(x.data(), "misplaced", {x},
                                      [](const Tensor& g) { return std::vector<Tensor>{g.to(Device::cpu())}; });
  CHECK_THROWS_WITH(
      y.backward(Tensor::ones({2}, DType::f64, elsewhere)),
      Catch::Contains("op 'misplaced': gradient of input 0 is f64[2] on cpu but the input is f64[2] on cpu:1"));
  CHECK_THROWS_WITH(agf::sum(x * 2.0).backward(Tensor::ones({}, DType::f64)),
                    Catch::Contains("does not match the output"));
}

TEST_CASE("every scheme's forward, backward and decoding stay on the parameters' device and dtype", "[device][train]") {
  for (const std::string pos : {"sinusoidal", "none", "rope", "alibi", "alibi-mult", "t5", "kerple-log", "kerple-power",
                                "agf-b", "agf-m", "agf-f"}) {
    for (const bool pre_norm : {false, true}) {
      INFO(pos << (pre_norm ? " pre-norm" : " post-norm"));
      agf::nn::TransformerConfig config = agf::nn::TransformerConfig::from_preset("tiny");
      config.pos = pos;
      config.pcmv = pos == "agf-m" || pos == "agf-f" || pos == "alibi-mult";
      config.abs_pe = pos == "agf-b";  // sinusoidal embeddings on top of a scheme
      config.learnable_k = true;
      config.pre_norm = pre_norm;
      config.dropout = 0.1;  // embeddings, sublayers and attention weights
      config.max_distance = 4;
      config.vocabulary_size = 23;
      agf::nn::Transformer model(config, 3, DType::f64);
      model.to(elsewhere);
      model.train();
      agf::nn::DropoutStream dropout(5);
      const agf::train::Batch batch =
          agf::train::make_batch({{5, 6, 7}, {8, 9}}, {{10, 11}, {12, 13, 14, 15}}).to(elsewhere);
      const Variable logits = model.forward(batch.encoder_input, batch.source_lengths, batch.decoder_input, dropout);
      const Variable loss = agf::train::sequence_loss(logits, batch.decoder_target, 0.1);
      CHECK(loss.data().description() == "f64[] on cpu:1");
      (loss * 4.0).backward();
      for (const auto& [name, parameter] : model.named_parameters()) {
        INFO(name);
        REQUIRE(parameter.grad().defined());
        CHECK(parameter.grad().description() == parameter.data().description());
      }
      CHECK(agf::train::translate(model, {{5, 6, 7}, {8}}).size() == 2);  // greedy, rows leaving the batch
      CHECK(agf::train::translate(model, {{5, 6, 7}}, {.beam = 3}).size() == 1);
    }
  }
}

TEST_CASE("the mixed-precision step keeps masters, moments and copies on the parameters' device",
          "[device][mixed-precision]") {
  std::vector<std::pair<std::string, Variable>> parameters{
      {"a", Variable(Tensor::from_vector(std::vector<double>{0.5, -1.25, 2.0}, {3}).to(elsewhere), true)},
      {"b", Variable(Tensor::from_vector(std::vector<double>{1.0, -0.5, 0.25, 3.0}, {2, 2}).to(elsewhere), true)}};
  agf::train::MixedPrecisionOptions options;
  options.compute_dtype = DType::f16;  // storage only on the CPU: conversion and the step run, no f16 compute
  options.master_copies = true;
  options.dynamic_loss_scaling = true;
  agf::train::MixedPrecisionOptimizer optimizer(parameters, options);
  parameters[0].second.set_grad(Tensor::full({3}, 0.25 * optimizer.loss_scale(), DType::f16, elsewhere));
  parameters[1].second.set_grad(Tensor::full({2, 2}, -0.5 * optimizer.loss_scale(), DType::f16, elsewhere));
  const agf::train::UpdateOutcome outcome = optimizer.step(1e-2, 0.5);
  CHECK(outcome.applied);
  for (const auto& [name, master] : optimizer.master_parameters()) CHECK(master.data().device() == elsewhere);
  for (const auto& [name, moment] : optimizer.adam().state()) CHECK(moment.device() == elsewhere);
  for (const auto& [name, parameter] : parameters) CHECK(parameter.data().device() == elsewhere);
}

TEST_CASE("Adam refuses a gradient on another device than its parameter", "[device][adam]") {
  const Variable parameter(Tensor::zeros({2}), true);
  agf::train::Adam adam({{"p", parameter}});
  parameter.set_grad(Tensor::ones({2}, DType::f32, elsewhere));
  CHECK_THROWS_WITH(adam.step(0.1),
                    Catch::Contains("Adam::step: tensors on different devices (f32[2] on cpu and f32[2] on cpu:1)"));
}

TEST_CASE("agf train, resume, evaluation and BLEU keep every tensor on --device", "[device][train][resume]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  agf::train::TrainOptions options;
  options.data_dir = data;
  options.out_dir = scratch.file("run");
  options.model = agf::nn::TransformerConfig::from_preset("tiny");
  options.model.pos = "agf-m";
  options.model.pcmv = true;
  options.model.dropout = 0.1;
  options.max_steps = 3;
  options.update_freq = 2;
  options.clip_norm = 0.5;
  options.warmup = 2;
  options.valid_every = 2;
  options.bleu_sentences = 2;
  options.quiet = true;
  options.device = elsewhere;
  const agf::train::TrainSummary first = agf::train::train(options);
  CHECK(first.steps == 3);
  options.max_steps = 4;
  options.resume = true;  // the checkpoint's weights and Adam's moments are loaded onto the device
  const agf::train::TrainSummary resumed = agf::train::train(options);
  CHECK(resumed.steps == 4);
  CHECK(std::isfinite(resumed.last_loss));

  // agf eval's path: a checkpoint loaded on the CPU, moved, evaluated with beam-search BLEU.
  auto loaded = agf::train::load_model(resumed.last_checkpoint);
  loaded.model->to(elsewhere);
  const auto dataset = agf::data::TokenDataset::open(data + "/valid.bin", loaded.bpe.hash());
  const agf::data::BpeCodec codec(loaded.bpe);
  const agf::train::EvaluationResult result = agf::train::evaluate(*loaded.model, dataset, codec,
                                                                   {.bleu_sentences = 2, .decode = {.beam = 2}});
  CHECK(result.target_tokens > 0);
  CHECK(result.bleu_sentences == 2);
}
