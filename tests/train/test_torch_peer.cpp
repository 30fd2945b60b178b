// Conformance with PyTorch: the same checkpoint and batch give the same loss and the same gradient of
// every parameter in agf (`agf grad`) and in tools/bench/torch_peer.py (autograd), in f64.
#include <catch2/catch.hpp>

#include "tests/skip.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "core/random.h"
#include "ops/elementwise.h"
#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "train/safetensors.h"

namespace {

constexpr const char* kSystemPython = "/usr/bin/python3";  // Debian's python3-torch lives there

bool torch_available() {
  return std::system((std::string(kSystemPython) + " -c 'import torch, numpy' >/dev/null 2>&1").c_str()) == 0;
}

// Adds small noise to every parameter, so that no gradient is zero or symmetric by construction
// (lc2 = lc3 = 1 and zero biases at initialisation would hide indexing mistakes).
void perturb_checkpoint(const std::string& path, uint64_t seed) {
  auto file = agf::train::load_safetensors(path);
  agf::Generator generator(seed);
  std::vector<std::pair<std::string, agf::Tensor>> tensors;
  for (auto& [name, tensor] : file.tensors) {
    const agf::Tensor noise = agf::uniform(tensor.shape(), generator, -0.05, 0.05, tensor.dtype());
    tensors.emplace_back(name, agf::ops::add(tensor, noise));
  }
  agf::train::save_safetensors(path, tensors, file.metadata);
}

}  // namespace

TEST_CASE("agf and PyTorch agree on the loss and every gradient, for every scheme", "[train][peer][torch]") {
  if (!torch_available()) {
    AGF_SKIP("/usr/bin/python3 cannot import torch and numpy (Debian's python3-torch; tools/setup.sh installs it)");
  }
  agf::test::ScratchDir scratch;
  const std::string fixture = std::string(AGF_SOURCE_DIR) + "/tests/fixtures/tiny-en-de";
  const std::string bpe = scratch.file("bpe.json");
  REQUIRE(
      run_agf("bpe learn --input " + fixture + "/train.en " + fixture + "/train.de --vocab-size 400 --output " + bpe)
          .status == 0);
  const std::string source = scratch.write("src.txt", "Select the cell range.\nDelete\nInvalid use of an object\n");
  const std::string target = scratch.write("tgt.txt", "Wählen Sie den Zellbereich.\nLöschen\nFalsche Verwendung\n");
  const std::vector<std::string> schemes = {"--pos sinusoidal",
                                            "--pos none --pre-norm",
                                            "--pos rope",
                                            "--pos alibi",
                                            "--pos alibi-mult --pcmv",
                                            "--pos t5",
                                            "--pos kerple-log",
                                            "--pos kerple-power",
                                            "--pos agf-b",
                                            "--pos agf-m --pcmv --learnable-k --max-distance 4",
                                            "--pos agf-f --pcmv --abs-pe --max-distance 4"};
  for (std::size_t s = 0; s < schemes.size(); ++s) {
    DYNAMIC_SECTION(schemes[s]) {
      const std::string checkpoint = scratch.file("model.safetensors"), ours = scratch.file("agf.safetensors"),
                        theirs = scratch.file("torch.safetensors"), batch = scratch.file("batch.safetensors");
      REQUIRE(run_agf("init --preset tiny " + schemes[s] + " --vocab " + bpe + " --out " + checkpoint).status == 0);
      perturb_checkpoint(checkpoint, 100 + s);
      const auto graded = run_agf("grad --checkpoint " + checkpoint + " --src " + source + " --tgt " + target +
                                  " --out " + ours + " --save-batch " + batch);
      INFO(graded.output);
      REQUIRE(graded.status == 0);
      const std::string peer = std::string(kSystemPython) + " " + AGF_SOURCE_DIR +
                               "/tools/bench/torch_peer.py grad --threads 1 --checkpoint " + checkpoint + " --batch " +
                               batch + " --out " + theirs;
      REQUIRE(std::system(peer.c_str()) == 0);
      const auto a = agf::train::load_safetensors(ours), t = agf::train::load_safetensors(theirs);
      CHECK(a.at("loss").item() == Approx(t.at("loss").item()).epsilon(1e-12));
      REQUIRE(a.tensors.size() == t.tensors.size());
      for (const auto& [name, grad] : a.tensors) {
        const std::vector<double> x = grad.to_double_vector(), y = t.at(name).to_double_vector();
        REQUIRE(x.size() == y.size());
        double scale = 0, difference = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          scale = std::max(scale, std::abs(y[i]));
          difference = std::max(difference, std::abs(x[i] - y[i]));
        }
        INFO(name << ": max |agf - torch| = " << difference << ", max |torch| = " << scale);
        CHECK(difference <= 1e-9 * std::max(scale, 1e-6));
      }
    }
  }
}

TEST_CASE("the PyTorch peer's training benchmark runs on the CPU and prints the line gpu-check.sh reads",
          "[train][peer][torch][bench]") {
  if (!torch_available()) {
    AGF_SKIP("/usr/bin/python3 cannot import torch and numpy (Debian's python3-torch; tools/setup.sh installs it)");
  }
  const std::string peer = std::string(kSystemPython) + " " + AGF_SOURCE_DIR + "/tools/bench/torch_peer.py bench ";
  const std::string model = " --preset tiny --pos agf-m --pcmv --batch 2 --length 4 --vocab 100 --threads 1 ";
  const CommandResult bench = run_command(peer + "--device cpu --precision fp32 --steps 1 --warmup 0" + model);
  INFO(bench.output);
  REQUIRE(bench.status == 0);
  // tools/gpu-check.sh takes field 2 of the line naming "target tokens/s" as PyTorch's rate.
  const std::regex rate_line(R"((^|\n)agf-m\+pcmv +[0-9]+\.[0-9] target tokens/s)");
  CHECK(std::regex_search(bench.output, rate_line));
  // bf16 autocast runs on the CPU (train_vs_torch.sh times it); fp16 there is refused in a sentence, not a traceback.
  const CommandResult bf16 = run_command(peer + "--device cpu --precision bf16 --steps 1 --warmup 0" + model);
  INFO(bf16.output);
  CHECK(bf16.status == 0);
  CHECK(std::regex_search(bf16.output, rate_line));
  const CommandResult fp16 = run_command(peer + "--device cpu --precision fp16 --steps 1" + model);
  CHECK(fp16.status != 0);
  CHECK_THAT(fp16.output, Catch::Contains("--precision fp16 needs --device cuda") && !Catch::Contains("Traceback"));
}
