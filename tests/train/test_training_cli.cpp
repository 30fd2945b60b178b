// End-to-end tests of the trainer through the `agf` program on the 20-pair fixture.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/device.h"
#include "data/bpe_model.h"
#include "ops/cpu/gemm_bf16.h"
#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/checkpoint.h"

using agf::test::train_losses;

namespace {

const std::string& fixture = agf::test::tiny_fixture;

const std::string tiny_flags =
    " --preset tiny --pos agf-m --pcmv --lr 3e-3 --warmup 30 --bleu-sentences 0 --quiet --threads 1";

}  // namespace

TEST_CASE("a tiny model overfits 20 pairs to 100% token accuracy", "[train][cli]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string run = scratch.file("run");
  const auto trained = run_agf("train --data " + data + " --out " + run + tiny_flags +
                               " --max-steps 250 --valid-every 250 --label-smoothing 0");
  INFO(trained.output);
  REQUIRE(trained.status == 0);
  const auto validations = agf::test::metrics_records(run, "valid");
  REQUIRE_FALSE(validations.empty());
  CHECK(validations.back().at("token_accuracy").get<double>() == 100.0);
  // The checkpoint translates the training sentences back exactly.
  const auto translated = run_agf("translate --checkpoint " + run + "/checkpoints/best.safetensors < " + fixture +
                                  "/train.en");
  REQUIRE(translated.status == 0);
  std::ifstream reference_file(fixture + "/train.de");
  const std::string reference((std::istreambuf_iterator<char>(reference_file)), {});
  CHECK(translated.output == reference);
  const auto beamed = run_agf("translate --beam 3 --checkpoint " + run + "/checkpoints/best.safetensors < " + fixture +
                              "/train.en");
  REQUIRE(beamed.status == 0);
  CHECK(beamed.output == reference);
  const auto evaluated = run_agf("eval --checkpoint " + run + "/checkpoints/best.safetensors --data " + data +
                                 " --split valid");
  CHECK(evaluated.status == 0);
  CHECK_THAT(evaluated.output, Catch::Contains("token accuracy 100.00%") && Catch::Contains("BLEU = 100.00"));
}

TEST_CASE("the linear learning-rate schedule falls from the peak after the warmup to 0 at --max-steps",
          "[train][cli]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string run = scratch.file("run");
  const std::string flags = " --preset tiny --lr 3e-3 --warmup 2 --bleu-sentences 0 --quiet --threads 1";
  const auto trained = run_agf("train --data " + data + " --out " + run + flags +
                               " --lr-schedule linear --max-steps 6 --valid-every 6");
  INFO(trained.output);
  REQUIRE(trained.status == 0);
  const auto steps = agf::test::metrics_records(run, "train");
  REQUIRE(steps.size() == 6);
  // warmup: 3e-3 · 1/2, 3e-3; then 3e-3 · (6 − s)/(6 − 2) for s = 3..6
  const std::vector<double> expected{1.5e-3, 3e-3, 2.25e-3, 1.5e-3, 0.75e-3, 0};
  for (std::size_t i = 0; i < steps.size(); ++i) CHECK(steps[i].at("lr").get<double>() == Approx(expected[i]));
  const auto bad = run_agf("train --data " + data + " --out " + scratch.file("bad") + flags +
                           " --lr-schedule cosine --max-steps 6");
  CHECK(bad.status == 2);
  CHECK_THAT(bad.output, Catch::Contains("--lr-schedule"));
  // A warmup as long as the run leaves the line nowhere to fall: refused before any data is read.
  const auto no_room = run_agf("train --data " + data + " --out " + scratch.file("no-room") + flags +
                               " --lr-schedule linear --max-steps 2");
  CHECK(no_room.status == 2);
  CHECK_THAT(no_room.output, Catch::Contains("the linear schedule needs --warmup (2) below --max-steps (2)"));
  CHECK_FALSE(std::filesystem::exists(scratch.file("no-room")));
}

TEST_CASE("a resumed run computes exactly the losses of an uninterrupted one", "[train][cli][resume]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  // Dropout on, a small token budget (several batches per epoch) and accumulation: every piece of state
  // (parameters, Adam moments, data position, dropout stream) must survive the checkpoint.
  const std::string flags = tiny_flags + " --dropout 0.2 --max-tokens 120 --update-freq 2 --valid-every 4";
  const std::string whole = scratch.file("whole"), split = scratch.file("split");
  REQUIRE(run_agf("train --data " + data + " --out " + whole + flags + " --max-steps 12").status == 0);
  REQUIRE(run_agf("train --data " + data + " --out " + split + flags + " --max-steps 6").status == 0);
  const auto refused = run_agf("train --data " + data + " --out " + split + flags + " --max-steps 12");
  CHECK(refused.status == 1);
  CHECK_THAT(refused.output, Catch::Contains("already holds checkpoints") && Catch::Contains("--resume"));
  // Resumes from step 6 (its final checkpoint) and extends the run to 12 steps.
  REQUIRE(run_agf("train --data " + data + " --out " + split + flags + " --max-steps 12 --resume").status == 0);
  const auto expected = train_losses(whole), actual = train_losses(split);
  REQUIRE(expected.size() == 12);
  REQUIRE(actual.size() == 12);
  for (const auto& [step, loss] : expected) {
    INFO("step " << step);
    CHECK(actual.at(step) == loss);  // bit for bit
  }
}

TEST_CASE("train --resume refuses a folder without a run and a run trained with another BPE model",
          "[train][cli][resume][errors]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string flags = tiny_flags + " --max-steps 2 --valid-every 2";
  // A mistyped --out must not start a new run unnoticed.
  const auto nowhere = run_agf("train --data " + data + " --out " + scratch.file("typo") + flags + " --resume");
  CHECK(nowhere.status == 1);
  CHECK_THAT(nowhere.output, Catch::Contains("--resume: " + scratch.file("typo") + " holds no run to continue"));
  CHECK_FALSE(std::filesystem::exists(scratch.file("typo")));
  // A run killed before its first checkpoint has nothing to continue: it starts again, and says so.
  std::filesystem::create_directories(scratch.file("early/checkpoints"));
  const auto early = run_agf("train --data " + data + " --out " + scratch.file("early") + flags + " --resume");
  CHECK(early.status == 0);
  CHECK_THAT(early.output, Catch::Contains("holds no checkpoint yet") && Catch::Contains("starting it from step 0"));
  // Another tokenizer of the same size: the ids would change meaning under the trained embeddings.
  const std::string other_bpe = scratch.file("other-bpe.json"), other_data = scratch.file("other-data");
  REQUIRE(run_agf("bpe learn --input " + fixture + "/train.en " + fixture +
                  "/train.de --vocab-size 400 --character-coverage 0.95 --output " + other_bpe)
              .status == 0);
  const auto ours = agf::data::BpeModel::load(data + "/bpe.json"), theirs = agf::data::BpeModel::load(other_bpe);
  REQUIRE(ours.vocab_size() == theirs.vocab_size());
  REQUIRE(ours.hash() != theirs.hash());
  REQUIRE(run_agf("corpus prepare --train-src " + fixture + "/train.en --train-tgt " + fixture +
                  "/train.de --valid-src " + fixture + "/train.en --valid-tgt " + fixture + "/train.de --bpe " +
                  other_bpe + " --out " + other_data)
              .status == 0);
  const auto mixed = run_agf("train --data " + other_data + " --out " + scratch.file("early") + tiny_flags +
                             " --max-steps 4 --resume");
  INFO(mixed.output);
  CHECK(mixed.status == 1);
  CHECK_THAT(mixed.output,
             Catch::Contains("step_00000002.safetensors: the run was trained with another BPE model than " +
                             other_data + "/bpe.json"));
}

TEST_CASE("filesystem errors exit 1 naming the path", "[train][cli][errors]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string file = scratch.write("a-file", "not a folder\n");
  const auto trained = run_agf("train --data " + data + " --out " + file + tiny_flags + " --max-steps 1");
  INFO(trained.output);
  CHECK(trained.status == 1);
  CHECK_THAT(trained.output, Catch::Contains("agf: error:") && Catch::Contains(file));
}

TEST_CASE("SIGTERM stops training with a checkpoint and --resume continues it exactly", "[train][cli][resume]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string flags = tiny_flags + " --dropout 0.1 --max-tokens 120 --valid-every 1000 --max-steps 40";
  const std::string whole = scratch.file("whole"), killed = scratch.file("killed");
  REQUIRE(run_agf("train --data " + data + " --out " + whole + flags).status == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::string command = std::string(AGF_BINARY) + " train --data " + data + " --out " + killed + flags +
                                " --log-every 1";
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until a few steps are logged, then ask it to stop.
  for (int wait = 0; wait < 600 && train_losses(killed).size() < 3; ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(child, SIGTERM);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto before = train_losses(killed);
  const int64_t stopped_at = before.rbegin()->first;
  INFO("stopped at step " << stopped_at);
  REQUIRE(run_agf("train --data " + data + " --out " + killed + flags + " --resume").status == 0);
  const auto expected = train_losses(whole), actual = train_losses(killed);
  REQUIRE(actual.size() == expected.size());
  for (const auto& [step, loss] : expected) CHECK(actual.at(step) == loss);
}

TEST_CASE("checkpoints round-trip and a corrupt one is refused with the file named", "[train][checkpoint]") {
  agf::test::ScratchDir scratch;
  const std::string bpe = scratch.file("bpe.json");
  REQUIRE(
      run_agf("bpe learn --input " + fixture + "/train.en " + fixture + "/train.de --vocab-size 400 --output " + bpe)
          .status == 0);
  const std::string checkpoint = scratch.file("init.safetensors");
  const auto initialised = run_agf("init --preset tiny --pos agf-f --pcmv --vocab " + bpe + " --out " + checkpoint +
                                   " --seed 5");
  REQUIRE(initialised.status == 0);
  const auto loaded = agf::train::load_model(checkpoint);
  CHECK(loaded.checkpoint.config.pos == "agf-f");
  CHECK(loaded.checkpoint.config.pcmv);
  CHECK(loaded.bpe.vocab_size() == 400);
  const agf::nn::Transformer fresh(loaded.checkpoint.config, 5);
  const auto original = fresh.named_parameters();
  const auto restored = loaded.model->named_parameters();
  REQUIRE(original.size() == restored.size());
  for (std::size_t i = 0; i < original.size(); ++i) {
    CHECK(original[i].first == restored[i].first);
    CHECK(original[i].second.data().to_double_vector() == restored[i].second.data().to_double_vector());
  }
  bool has_lc3 = false;
  for (const auto& [name, parameter] : restored) has_lc3 = has_lc3 || name == "encoder.layers.0.self_attn.pos.lc3";
  CHECK(has_lc3);
  // Truncate it: every command that reads it must fail cleanly, naming it.
  std::filesystem::resize_file(checkpoint, std::filesystem::file_size(checkpoint) / 2);
  const auto translated = run_agf("translate --checkpoint " + checkpoint + " < /dev/null");
  CHECK(translated.status == 1);
  CHECK_THAT(translated.output, Catch::Contains(checkpoint) && Catch::Contains("truncated"));
  // A checkpoint of another scheme is not half-loaded into a model.
  const std::string other = scratch.file("other.safetensors");
  REQUIRE(run_agf("init --preset tiny --pos agf-m --vocab " + bpe + " --out " + other).status == 0);
  auto mismatched = agf::train::load_checkpoint(other);
  mismatched.config.pos = "kerple-log";
  agf::nn::Transformer kerple(mismatched.config, 1);
  CHECK_THROWS_WITH(agf::train::load_parameters(kerple, mismatched, other), Catch::Contains("pos.r1"));
}

TEST_CASE("bad training flags and inputs give clear errors", "[train][cli][errors]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const auto bad_scheme = run_agf("train --data " + data + " --out " + scratch.file("a") + " --pos gravity");
  CHECK(bad_scheme.status == 1);
  CHECK_THAT(bad_scheme.output, Catch::Contains("unknown positional scheme 'gravity'"));
  const auto bad_pcmv = run_agf("train --data " + data + " --out " + scratch.file("b") + " --pos rope --pcmv");
  CHECK(bad_pcmv.status == 1);
  CHECK_THAT(bad_pcmv.output, Catch::Contains("--pcmv applies to coefficient schemes"));
  const auto bad_preset = run_agf("train --data " + data + " --out " + scratch.file("c") + " --preset huge");
  CHECK(bad_preset.status == 1);
  CHECK_THAT(bad_preset.output, Catch::Contains("unknown preset 'huge'"));
  const auto bad_number = run_agf("train --data " + data + " --out " + scratch.file("d") + " --max-steps -3");
  CHECK(bad_number.status == 2);
  const auto no_data = run_agf("train --data " + scratch.file("nowhere") + " --out " + scratch.file("e"));
  CHECK(no_data.status == 2);
  CHECK_THAT(no_data.output, Catch::Contains("nowhere"));
  const auto missing_split = run_agf("train --data " + scratch.path().string() + " --out " + scratch.file("f"));
  CHECK(missing_split.status == 1);
  CHECK_THAT(missing_split.output, Catch::Contains("train.bin is missing in --data"));
}

TEST_CASE(
    "fp16 needs --device cuda, bf16 on the CPU needs bf16 arithmetic, and a missing GPU is refused with its reason",
    "[train][cli][errors][mixed-precision]") {
  agf::test::ScratchDir scratch;
  const std::string data = scratch.path().string();  // never read: the flags are refused first
  const auto half = run_agf("train --data " + data + " --out " + scratch.file("a") + " --precision fp16");
  INFO(half.output);
  CHECK(half.status == 1);
  CHECK_THAT(half.output, Catch::Contains("--precision fp16 needs --device cuda") &&
                              Catch::Contains("the CPU computes in f32 and f64"));
  const auto bf16 = run_agf("train --data " + data + " --out " + scratch.file("a") + " --precision bf16");
  INFO(bf16.output);
  CHECK(bf16.status == 1);
  if (agf::ops::cpu::bf16_avx512_supported()) {
    CHECK_THAT(bf16.output, Catch::Contains("bpe.json is missing in --data"));  // accepted: it got to the data
    // and it trains, recording the precision
    const std::string prepared = agf::test::prepare_tiny_fixture(scratch), run = scratch.file("bf16-run");
    const auto trained = run_agf("train --data " + prepared + " --out " + run + tiny_flags +
                                 " --max-steps 4 --valid-every 4 --precision bf16");
    INFO(trained.output);
    CHECK(trained.status == 0);
    const auto checkpoint = agf::train::load_checkpoint(run + "/checkpoints/step_00000004.safetensors");
    REQUIRE(checkpoint.state.has_value());
    CHECK(checkpoint.state->precision == "bf16");
  } else {
    CHECK_THAT(bf16.output, Catch::Contains("train: --precision bf16 on the CPU: this processor has no AVX512-BF16") &&
                                Catch::Contains("use --precision fp32 here, or --device cuda"));
  }
  const auto bad_precision = run_agf("train --data " + data + " --out " + scratch.file("b") + " --precision fp8");
  CHECK(bad_precision.status == 1);
  CHECK_THAT(bad_precision.output, Catch::Contains("--precision: expected fp32, fp16 or bf16, got 'fp8'"));
  const auto bad_device = run_agf("train --data " + data + " --out " + scratch.file("c") + " --device tpu");
  CHECK(bad_device.status == 1);
  CHECK_THAT(bad_device.output, Catch::Contains("--device: 'tpu' is not a device: use cpu, cuda or cuda:N"));
  if (agf::cuda_device_count() > 0) {
    const auto past_last = run_agf("train --data " + data + " --out " + scratch.file("d") + " --device cuda:99");
    CHECK(past_last.status == 1);
    CHECK_THAT(past_last.output, Catch::Contains("--device cuda:99: this machine has"));
    return;  // a GPU is here: `--device cuda` works (the CUDA tests train with it)
  }
  const std::string reason = agf::cuda_unavailable_reason();
  REQUIRE_FALSE(reason.empty());
  for (const std::string& command :
       {"train --data " + data + " --out " + scratch.file("e") + " --device cuda",
        "train --data " + data + " --out " + scratch.file("f") + " --device cuda --precision bf16",
        "eval --checkpoint " + std::string(AGF_BINARY) + " --data " + data + " --device cuda",
        "translate --checkpoint " + std::string(AGF_BINARY) + " --device cuda:1 < /dev/null"}) {
    const auto refused = run_agf(command);
    INFO(command << "\n" << refused.output);
    CHECK(refused.status == 1);
    CHECK_THAT(refused.output, Catch::Contains("--device cuda") && Catch::Contains(reason));
  }
}

TEST_CASE("metrics.jsonl and checkpoints carry the loss scale, skipped steps and precision",
          "[train][cli][mixed-precision]") {
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string run = scratch.file("run");
  const auto trained = run_agf("train --data " + data + " --out " + run + tiny_flags +
                               " --max-steps 4 --valid-every 4 --device cpu --precision fp32");
  INFO(trained.output);
  REQUIRE(trained.status == 0);
  const auto train_records = agf::test::metrics_records(run, "train");
  for (const auto& record : train_records) {
    CHECK(record.at("loss_scale").get<double>() == 1.0);
    CHECK(record.at("skipped_steps").get<int64_t>() == 0);
  }
  CHECK(train_records.size() == 4);
  const auto checkpoint = agf::train::load_checkpoint(run + "/checkpoints/step_00000004.safetensors");
  REQUIRE(checkpoint.state.has_value());
  CHECK(checkpoint.state->precision == "fp32");
  REQUIRE(checkpoint.state->loss_scaler.has_value());
  CHECK(checkpoint.state->loss_scaler->scale == 1.0);
  CHECK(checkpoint.state->loss_scaler->skipped_steps == 0);
  for (const auto& [name, tensor] : checkpoint.file.tensors) {
    INFO(name);
    CHECK(tensor.dtype() == agf::DType::f32);
  }
  // eval and translate take --device too.
  const auto evaluated = run_agf("eval --device cpu --bleu-sentences 2 --checkpoint " + run +
                                 "/checkpoints/step_00000004.safetensors --data " + data);
  INFO(evaluated.output);
  CHECK(evaluated.status == 0);
  CHECK_THAT(evaluated.output, Catch::Contains("token accuracy"));
  const auto translated = run_agf("translate --device cpu --checkpoint " + run +
                                  "/checkpoints/step_00000004.safetensors < " + fixture + "/train.en");
  CHECK(translated.status == 0);
}
