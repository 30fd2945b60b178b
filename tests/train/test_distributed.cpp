// Data-parallel training under mpirun (train/distributed.h, docs/distributed.md): 2 processes compute what
// one does, resume exactly, refuse another number of processes, and a lost process stops the others.
// The tests that start mpirun skip, saying why, where it or agf's MPI support is missing.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/device.h"
#include "tests/data/scratch_dir.h"
#include "tests/skip.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/distributed.h"
#include "train/safetensors.h"

using agf::test::train_losses;

namespace {

const std::string& fixture = agf::test::tiny_fixture;

// Why the tests that start mpirun cannot run here; "" when they can.
std::string mpirun_missing() {
  if (!agf::train::mpi_built_in())
    return "agf was built without MPI (tools/setup.sh installs libopenmpi-dev; cmake -DAGF_MPI=ON)";
  if (run_command("command -v mpirun").status != 0)
    return "mpirun is not installed (tools/setup.sh installs openmpi-bin)";
  return "";
}

#define REQUIRE_MPIRUN()                                 \
  do {                                                   \
    static const std::string missing = mpirun_missing(); \
    if (!missing.empty()) AGF_SKIP(missing.c_str());     \
  } while (false)

// In a build with AddressSanitizer: its leak check off in the processes mpirun starts, as Open MPI's own
// allocations outlive MPI_Finalize by design and would fail every run.
#if defined(__SANITIZE_ADDRESS__)
#define AGF_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AGF_TEST_ASAN 1
#endif
#endif
std::string without_leak_check() {
#ifdef AGF_TEST_ASAN
  const char* options = std::getenv("ASAN_OPTIONS");
  return fmt::format("-x ASAN_OPTIONS={}detect_leaks=0 ", options ? std::string(options) + ":" : "");
#else
  return "";
#endif
}

// `mpirun -np N` with one thread per process, on any machine: --oversubscribe (more processes than cores),
// no binding (the test machine may be shared), and --allow-run-as-root where the tests run as root (a
// container). The shared-memory transport copies through its own buffers: the single-copy mechanism (CMA)
// needs ptrace rights that containers often withhold.
std::string mpirun(int processes) {
  return fmt::format("mpirun --oversubscribe --bind-to none -np {} {}--mca btl_vader_single_copy_mechanism none "
                     "-x OMP_NUM_THREADS=1 {}",
                     processes, ::geteuid() == 0 ? "--allow-run-as-root " : "", without_leak_check());
}

const std::string tiny_flags =
    " --preset tiny --pos agf-m --pcmv --lr 3e-3 --warmup 30 --bleu-sentences 0 --quiet --threads 1";

}  // namespace

TEST_CASE("a single process is a world of one", "[distributed]") {
  agf::train::World& world = agf::train::world();
  CHECK(world.size() == 1);
  CHECK(world.rank() == 0);
  CHECK(world.label().empty());
  agf::Tensor values = agf::Tensor::from_vector(std::vector<double>{1.5, -2}, {2});
  world.sum(values);  // nothing to add
  CHECK(values.to_double_vector() == std::vector<double>{1.5, -2});
  CHECK(world.all_gather(7) == std::vector<uint64_t>{7});
}

TEST_CASE("2 and 3 processes compute the gradient of the whole batch (agf grad, f64)", "[distributed][mpi]") {
  REQUIRE_MPIRUN();
  agf::test::ScratchDir scratch;
  const std::string bpe = scratch.file("bpe.json"), model = scratch.file("model.safetensors");
  REQUIRE(
      run_agf("bpe learn --input " + fixture + "/train.en " + fixture + "/train.de --vocab-size 400 --output " + bpe)
          .status == 0);
  REQUIRE(run_agf("init --preset tiny --pos agf-m --pcmv --vocab " + bpe + " --out " + model + " --seed 3").status ==
          0);
  const std::string lines = " --checkpoint " + model + " --src " + fixture + "/train.en --tgt " + fixture +
                            "/train.de --dtype f64";
  const auto whole = run_agf("grad" + lines + " --out " + scratch.file("whole.safetensors"));
  INFO(whole.output);
  REQUIRE(whole.status == 0);
  const auto expected = agf::train::load_safetensors(scratch.file("whole.safetensors"));
  for (int processes : {2, 3}) {
    const std::string out = scratch.file(fmt::format("world{}.safetensors", processes));
    const auto summed = run_command(mpirun(processes) + AGF_BINARY + " grad" + lines + " --out " + out);
    INFO(summed.output);
    REQUIRE(summed.status == 0);
    CHECK_THAT(summed.output, Catch::Contains(fmt::format("summed over {} processes", processes)));
    const auto actual = agf::train::load_safetensors(out);
    REQUIRE(actual.tensors.size() == expected.tensors.size());
    double largest_difference = 0, largest_gradient = 0;
    for (const auto& [name, tensor] : expected.tensors) {
      const std::vector<double> want = tensor.to_double_vector(), got = actual.at(name).to_double_vector();
      REQUIRE(want.size() == got.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        largest_difference = std::max(largest_difference, std::abs(want[i] - got[i]));
        largest_gradient = std::max(largest_gradient, std::abs(want[i]));
      }
    }
    INFO(processes << " processes: largest difference " << largest_difference << ", largest value "
                   << largest_gradient);
    CHECK(largest_gradient > 0.01);  // not a comparison of zeros
    CHECK(largest_difference <= 1e-12);
  }
}

TEST_CASE("2 processes train as one: the loss of every step equals the single process's", "[distributed][mpi][train]") {
  REQUIRE_MPIRUN();
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  // Dropout off (the processes' streams differ), several rows per batch, accumulation.
  const std::string flags = tiny_flags + " --dropout 0 --max-tokens 120 --update-freq 2 --valid-every 6 --max-steps 12";
  const std::string single = scratch.file("single"), pair = scratch.file("pair");
  REQUIRE(run_agf("train --data " + data + " --out " + single + flags).status == 0);
  const auto distributed = run_command(mpirun(2) + AGF_BINARY + " train --data " + data + " --out " + pair + flags);
  INFO(distributed.output);
  REQUIRE(distributed.status == 0);
  CHECK_THAT(distributed.output, Catch::Contains("processes 2"));
  const auto expected = train_losses(single), actual = train_losses(pair);
  REQUIRE(expected.size() == 12);
  REQUIRE(actual.size() == 12);  // each step once: rank 0 alone writes metrics.jsonl
  for (const auto& [step, loss] : expected) {
    INFO("step " << step << ": " << loss << " vs " << actual.at(step));
    // f32 sums in another order (two shards of other padded lengths, then their sum), and the updates that
    // follow: seen here, a relative 3e-8 after 12 steps of Adam at lr 3e-3; allowed, 30 times that.
    CHECK(std::abs(actual.at(step) - loss) <= 1e-6 * loss);
  }
  for (const auto& record : agf::test::metrics_records(pair, "train")) {
    CHECK(record.at("processes").get<int>() == 2);
    CHECK(record.at("allreduce_seconds").get<double>() >= 0);
  }
  CHECK(agf::test::metrics_records(pair, "valid").size() == 2);
  CHECK(std::filesystem::exists(pair + "/checkpoints/step_00000012.safetensors"));
}

TEST_CASE("2 processes resume exactly, and another number of processes is refused",
          "[distributed][mpi][train][resume]") {
  REQUIRE_MPIRUN();
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  // Dropout on: each process's stream must be saved and restored.
  const std::string flags = tiny_flags + " --dropout 0.2 --max-tokens 120 --valid-every 4";
  const std::string whole = scratch.file("whole"), split = scratch.file("split");
  const std::string two = mpirun(2) + AGF_BINARY + " train --data " + data;
  REQUIRE(run_command(two + " --out " + whole + flags + " --max-steps 10").status == 0);
  REQUIRE(run_command(two + " --out " + split + flags + " --max-steps 5").status == 0);
  // One process may not continue it: its batches would be split otherwise and its dropout masks differ.
  const auto alone = run_agf("train --data " + data + " --out " + split + flags + " --max-steps 10 --resume");
  CHECK(alone.status == 1);
  CHECK_THAT(alone.output, Catch::Contains("was written by a run of 2 processes (mpirun -np 2) and this is a single "
                                           "process") &&
                               Catch::Contains("--reshard"));
  const auto resumed = run_command(two + " --out " + split + flags + " --max-steps 10 --resume");
  INFO(resumed.output);
  REQUIRE(resumed.status == 0);
  const auto expected = train_losses(whole), actual = train_losses(split);
  REQUIRE(expected.size() == 10);
  REQUIRE(actual.size() == 10);
  for (const auto& [step, loss] : expected) {
    INFO("step " << step);
    CHECK(actual.at(step) == loss);  // bit for bit
  }

  // And the reverse: a single process's checkpoint under mpirun is refused, or continued with --reshard.
  const std::string single = scratch.file("single");
  REQUIRE(run_agf("train --data " + data + " --out " + single + flags + " --max-steps 4").status == 0);
  const auto refused = run_command(two + " --out " + single + flags + " --max-steps 8 --resume");
  CHECK(refused.status != 0);
  CHECK_THAT(refused.output, Catch::Contains("was written by a run of a single process and this is 2 processes"));
  const auto resharded = run_command(two + " --out " + single + flags + " --max-steps 8 --resume --reshard");
  INFO(resharded.output);
  CHECK(resharded.status == 0);
  CHECK_THAT(resharded.output, Catch::Contains("note: --reshard"));
  CHECK(train_losses(single).size() == 8);
}

namespace {

// The process ids of mpirun's children whose MPI rank is `rank` (from /proc: their parent, their environment).
std::vector<pid_t> processes_of_rank(pid_t launcher, int rank) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/PID/stat: "PID (command) state PPID ...", the command in parentheses may hold spaces.
    std::ifstream stat_file(entry.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(stat_file)), {});
    const std::size_t after_command = stat.rfind(')');
    if (after_command == std::string::npos) continue;
    std::istringstream fields(stat.substr(after_command + 1));
    std::string state;
    pid_t parent = 0;
    if (!(fields >> state >> parent) || parent != launcher) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    std::ifstream environment(fmt::format("/proc/{}/environ", pid), std::ios::binary);
    const std::string variables((std::istreambuf_iterator<char>(environment)), {});
    if (variables.find(fmt::format("OMPI_COMM_WORLD_RANK={}", rank) + '\0') != std::string::npos) found.push_back(pid);
  }
  return found;
}

struct Finished {
  int status = -1;     // mpirun's exit status
  double seconds = 0;  // from the kill to mpirun's exit
  std::string output;
};

// Starts `command` (an mpirun) with its output in `log`, waits until RUN/metrics.jsonl shows 3 steps, kills
// rank 1 with `signal`, and waits for mpirun to end (at most 120 s).
Finished kill_rank_1(const std::string& command, const std::string& run, const std::string& log, int signal) {
  const pid_t launcher = ::fork();
  REQUIRE(launcher >= 0);
  if (launcher == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec " + command + " > " + log + " 2>&1").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int wait = 0; wait < 1200 && train_losses(run).size() < 3; ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(train_losses(run).size() >= 3);
  const std::vector<pid_t> victims = processes_of_rank(launcher, 1);
  REQUIRE(victims.size() == 1);
  const auto killed_at = std::chrono::steady_clock::now();
  ::kill(victims.front(), signal);
  Finished finished;
  int raw = 0;
  for (int wait = 0; wait < 1200; ++wait) {
    if (::waitpid(launcher, &raw, WNOHANG) == launcher) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (::waitpid(launcher, &raw, WNOHANG) == 0) {  // still running after 120 s: a hang
    ::kill(launcher, SIGKILL);
    ::waitpid(launcher, &raw, 0);
  }
  finished.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  finished.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  std::ifstream in(log);
  finished.output.assign(std::istreambuf_iterator<char>(in), {});
  return finished;
}

}  // namespace

TEST_CASE("a killed process stops the others within 60 s, naming it", "[distributed][mpi][train][errors]") {
  REQUIRE_MPIRUN();
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string run = scratch.file("run");
  const std::string command = mpirun(2) + AGF_BINARY + " train --data " + data + " --out " + run + tiny_flags +
                              " --max-tokens 120 --max-steps 100000 --valid-every 100000";
  const Finished finished = kill_rank_1(command, run, scratch.file("log"), SIGKILL);
  INFO(finished.output);
  INFO("mpirun ended " << finished.seconds << " s after the kill");
  CHECK(finished.status != 0);
  CHECK(finished.seconds < 60);
  CHECK_THAT(finished.output, Catch::Contains("rank 1") && Catch::Contains("signal 9"));
}

TEST_CASE("an error in one process stops the others, naming it", "[distributed][mpi][train][errors]") {
  REQUIRE_MPIRUN();
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  // Rank 1 is given a data folder without train.bin (mpirun's "A : B" starts two different command lines).
  const std::string broken = scratch.file("broken");
  std::filesystem::create_directories(broken);
  std::filesystem::copy_file(data + "/bpe.json", broken + "/bpe.json");
  const std::string train = std::string(AGF_BINARY) + " train --out " + scratch.file("run") + tiny_flags +
                            " --max-steps 1000";
  const std::string command = mpirun(1) + train + " --data " + data + " : -np 1 " + train + " --data " + broken;
  const auto started = std::chrono::steady_clock::now();
  const auto failed = run_command(command);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(failed.output);
  CHECK(failed.status == 1);
  CHECK(seconds < 60);
  CHECK_THAT(failed.output, Catch::Contains("agf: error (rank 1 of 2): train: train.bin is missing"));
}

TEST_CASE("under mpirun on GPUs: one GPU trains as a world of 1, two sum their gradients with NCCL",
          "[distributed][mpi][gpu]") {
  REQUIRE_MPIRUN();
  if (agf::cuda_device_count() == 0) {
    static const std::string reason = agf::cuda_unavailable_reason();
    AGF_SKIP(reason.c_str());
  }
  const int processes = std::min(agf::cuda_device_count(), 2);  // NCCL wants one GPU per process
  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string flags = tiny_flags + " --device cuda --dropout 0 --max-tokens 120 --valid-every 6 --max-steps 6";
  REQUIRE(run_agf("train --data " + data + " --out " + scratch.file("single") + flags).status == 0);
  const auto launched = run_command(mpirun(processes) + AGF_BINARY + " train --data " + data + " --out " +
                                    scratch.file("world") + flags);
  INFO(launched.output);
  REQUIRE(launched.status == 0);
  const auto expected = train_losses(scratch.file("single")), actual = train_losses(scratch.file("world"));
  REQUIRE(actual.size() == expected.size());
  for (const auto& [step, loss] : expected) {
    INFO("step " << step << ", " << processes << " processes: " << loss << " vs " << actual.at(step));
    CHECK(std::abs(actual.at(step) - loss) <= 1e-5 * loss);
  }
  const bool summed = agf::test::metrics_records(scratch.file("world"), "train").front().contains("processes");
  CHECK(summed == (processes > 1));
}
