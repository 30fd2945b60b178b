// `agf bench train`: the flags that gpu-check.sh relies on, and their errors without a GPU; `agf bench matmul`:
// the table tools/bench/matmul_vs_torch.sh reads (product m k n layout ms rate).
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>

#include "core/device.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_bf16.h"
#include "tests/skip.h"
#include "tests/tools/cli_runner.h"

TEST_CASE("agf bench train times steps and prints tokens/s and TFLOP/s", "[cli][bench]") {
  const CommandResult run = run_agf("bench train --preset tiny --batch 4 --length 6 --vocab 50 --steps 1");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains("target tok/s") && Catch::Contains("TFLOP/s") && Catch::Contains("MFU@790") &&
                             Catch::Contains("agf-m"));
  // The self-check gpu-check.sh relies on: the first and last step's losses, the first near ln V = ln 50.
  std::smatch losses;
  REQUIRE(std::regex_search(run.output, losses, std::regex(R"(agf-m .* ([0-9.]+) → ([0-9.]+))")));
  CHECK(std::stod(losses[1]) > 0.8 * std::log(50.0));
  CHECK(std::stod(losses[1]) < 1.5 * std::log(50.0));
  CHECK(std::stod(losses[2]) > 0);
}

TEST_CASE("agf bench train refuses fp16 on the CPU, bf16 on a CPU without bf16 arithmetic, and a missing GPU",
          "[cli][bench][errors]") {
  const CommandResult half = run_agf("bench train --preset tiny --precision fp16 --steps 1");
  CHECK(half.status == 1);
  CHECK_THAT(half.output, Catch::Contains("--precision fp16 needs --device cuda"));
  const CommandResult bf16 = run_agf(
      "bench train --preset tiny --batch 4 --length 6 --vocab 50 --precision bf16 --steps 1");
  INFO(bf16.output);
  const agf::ops::cpu::Bf16Kernel kernel = agf::ops::cpu::bf16_kernel();
  if (kernel != agf::ops::cpu::Bf16Kernel::none) {
    CHECK(bf16.status == 0);  // it runs, naming the kernel
    CHECK_THAT(bf16.output, Catch::Contains("matrix products: bf16 operands, f32 sums, kernel " +
                                            agf::ops::cpu::bf16_kernel_name(kernel)));
  } else {
    CHECK(bf16.status == 1);  // one line: what is missing, what to use instead
    CHECK_THAT(bf16.output, Catch::Contains("bench train: --precision bf16 on the CPU: this processor has no "
                                            "AVX512-BF16") &&
                                Catch::Contains("use --precision fp32 here"));
  }
  // --bf16-kernel: the portable kernel anywhere, named; only with bf16 on the CPU.
  const CommandResult portable = run_agf(
      "bench train --preset tiny --batch 4 --length 6 --vocab 50 --precision bf16 --bf16-kernel portable --steps 1");
  INFO(portable.output);
  CHECK(portable.status == 0);
  CHECK_THAT(portable.output, Catch::Contains("kernel portable (plain C++, slow"));
  CHECK(run_agf("bench train --preset tiny --steps 1 --bf16-kernel portable").status == 2);
  if (agf::cuda_device_count() > 0) AGF_SKIP("a GPU is present; the missing-GPU error cannot be seen here");
  const CommandResult gpu = run_agf("bench train --preset tiny --device cuda --steps 1");
  CHECK(gpu.status == 1);
  CHECK_THAT(gpu.output, Catch::Contains("--device cuda") && Catch::Contains(agf::cuda_unavailable_reason()));
}

TEST_CASE("agf bench matmul --precision bf16 times bf16 products where the CPU has them, another kernel if asked",
          "[cli][bench][bf16]") {
  const CommandResult portable = run_agf("bench matmul --sizes 40 --repeats 1 --precision bf16 --bf16-kernel portable");
  INFO(portable.output);
  CHECK(portable.status == 0);
  CHECK_THAT(portable.output, Catch::Contains("bf16 operands, f32 sums, kernel portable (plain C++, slow"));
  CHECK(std::regex_search(portable.output, std::regex(R"(n=40 +40 +40 +40 +NN +[0-9.]+ +[0-9.]+)")));
  const CommandResult chosen = run_agf("bench matmul --sizes 40 --repeats 1 --precision bf16");
  INFO(chosen.output);
  using agf::ops::cpu::Bf16Kernel;
  if (agf::ops::cpu::bf16_kernel() != Bf16Kernel::none) {
    CHECK(chosen.status == 0);
    CHECK_THAT(chosen.output,
               Catch::Contains("kernel " + agf::ops::cpu::bf16_kernel_name(agf::ops::cpu::bf16_kernel())));
  } else {
    CHECK(chosen.status == 1);
    CHECK_THAT(chosen.output, Catch::Contains("no AVX512-BF16") && Catch::Contains("--bf16-kernel portable"));
  }
  // Each kernel by name: timed where it runs, an error naming it where it cannot.
  for (const Bf16Kernel kernel : {Bf16Kernel::avx512bf16, Bf16Kernel::amx}) {
    const std::string name = agf::ops::cpu::bf16_kernel_name(kernel);
    const CommandResult forced = run_agf("bench matmul --sizes 40 --repeats 1 --precision bf16 --bf16-kernel " +
                                         agf::ops::cpu::bf16_kernel_flag(kernel));
    INFO(forced.output);
    if (agf::ops::cpu::bf16_kernel_supported(kernel)) {
      CHECK(forced.status == 0);
      CHECK_THAT(forced.output, Catch::Contains("kernel " + name));
    } else {
      CHECK(forced.status == 1);
      CHECK_THAT(forced.output, Catch::Contains("cannot run on this processor") && Catch::Contains(name));
    }
  }
  CHECK(run_agf("bench matmul --sizes 40 --bf16-kernel portable").status == 2);  // without --precision bf16
  CHECK(run_agf("bench matmul --sizes 40 --precision bf16 --bf16-kernel avx2").status == 2);
  CHECK(run_agf("bench matmul --sizes 40 --precision bf16 --dtype f64").status == 2);
  CHECK(run_agf("bench matmul --sizes 40 --precision fp16").status == 2);
}

TEST_CASE("agf bench matmul and train time the f32 products by another GEMM library if asked", "[cli][bench][gemm]") {
  using agf::ops::cpu::GemmLibrary;
  const CommandResult chosen = run_agf("bench matmul --sizes 40 --repeats 1");
  INFO(chosen.output);
  CHECK(chosen.status == 0);
  CHECK_THAT(chosen.output, Catch::Contains(agf::ops::cpu::gemm_library()));
  const CommandResult f64 = run_agf("bench matmul --sizes 40 --repeats 1 --dtype f64");  // f64 has its own library
  INFO(f64.output);
  CHECK(f64.status == 0);
  CHECK_THAT(f64.output, Catch::Contains("matmul f64 with") && Catch::Contains(agf::ops::cpu::gemm_library<double>()));
  for (const GemmLibrary library : agf::ops::cpu::kGemmLibraries) {
    const std::string name = agf::ops::cpu::gemm_library_name(library);
    const std::string flag = " --gemm-library " + agf::ops::cpu::gemm_library_flag(library);
    const CommandResult matmul = run_agf("bench matmul --sizes 40 --repeats 1" + flag);
    const CommandResult train = run_agf("bench train --preset tiny --batch 4 --length 6 --vocab 50 --steps 1" + flag);
    INFO(matmul.output << train.output);
    if (agf::ops::cpu::gemm_library_built(library)) {
      CHECK(matmul.status == 0);
      CHECK_THAT(matmul.output, Catch::Contains("f32 with") && Catch::Contains(name));
      CHECK(std::regex_search(matmul.output, std::regex(R"(n=40 +40 +40 +40 +NN +[0-9.]+ +[0-9.]+)")));
      CHECK(train.status == 0);
      CHECK_THAT(train.output, Catch::Contains("matrix products: f32, " + name));
    } else {
      CHECK(matmul.status == 1);
      CHECK_THAT(matmul.output, Catch::Contains("the GEMM library '" + agf::ops::cpu::gemm_library_flag(library) +
                                                "' is not in this build"));
    }
  }
  CHECK(run_agf("bench matmul --sizes 40 --gemm-library mkl").status == 2);
  CHECK(run_agf("bench matmul --sizes 40 --dtype f64 --gemm-library eigen").status == 2);
  CHECK(run_agf("bench matmul --sizes 40 --precision bf16 --bf16-kernel portable --gemm-library eigen").status == 2);
  CHECK(run_agf("bench train --preset tiny --steps 1 --precision bf16 --bf16-kernel portable --gemm-library eigen")
            .status == 2);
}

TEST_CASE("agf bench matmul --model-shapes prints one row per product, transposed layouts included", "[cli][bench]") {
  const CommandResult run = run_agf("bench matmul --sizes 32 --model-shapes --repeats 1");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains("matmul f32 with") && Catch::Contains("layout"));
  // name m k n layout ms GFLOP/s: the square size, a forward x·Wᵀ (NT), an input gradient (NN), a weight gradient (TN)
  for (const char* row : {R"(n=32 +32 +32 +32 +NN +[0-9.]+ +[0-9.]+)", R"(xWt-logits +1536 +256 +8000 +NT )",
                          R"(gW-logits +1536 +8000 +256 +NN )", R"(xtG-logits +256 +1536 +8000 +TN )"}) {
    INFO(row);
    CHECK(std::regex_search(run.output, std::regex(row)));
  }
}
