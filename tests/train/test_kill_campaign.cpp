// The SIGKILL campaign (docs/crash-safety.md): `agf train` with frequent --save-every is killed at 40 random
// moments, about half of them aimed inside a file write (a checkpoint, best.safetensors, or the rewrite of
// metrics.jsonl at a resume). After every kill, every checkpoint on disk must load, and metrics.jsonl must
// hold whole lines, no step twice, with the losses of an uninterrupted run; each killed run is resumed
// until it finishes, and must end with exactly the uninterrupted run's losses and weights, bit for bit.
//
// Kills aimed inside a write wait for inotify to report that the n-th write has begun (a file created: agf
// creates "*.tmp" files only; or the first change to metrics.jsonl), then wait 0–2 ms more (the write, its
// fsync, the rename and the folder's fsync take about that long), so they land in every phase of it; no
// hook in agf is needed. The moments are drawn from a seeded generator,
// printed at the start: AGF_CHAOS_SEED=N repeats the campaign's choices (the kernel's timing varies).
#include <catch2/catch.hpp>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/data/scratch_dir.h"
#include "tests/tools/cli_runner.h"
#include "tests/train/tiny_fixture.h"
#include "train/checkpoint.h"
#include "train/safetensors.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kKills = 40;
constexpr int kMaxKills = 160;
constexpr int kMaxSteps = 30;
// Dropout and several batches per epoch, so that every piece of state must survive; a validation (and
// best.safetensors) every 10 steps; a checkpoint every 2 steps, the last 2 kept.
const std::string train_flags = " --preset tiny --pos agf-m --pcmv --lr 3e-3 --warmup 30 --bleu-sentences 0 --quiet"
                                " --threads 1 --dropout 0.1 --max-tokens 120 --valid-every 10 --save-every 2"
                                " --keep-last 2 --save-every-minutes 0 --max-steps " +
                                std::to_string(kMaxSteps);

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// metrics.jsonl by split and step. Fails the test on a torn line (not JSON, or the file not ending in '\n')
// and on a step logged twice.
struct Metrics {
  std::map<int64_t, nlohmann::json> train, valid;
};

Metrics read_metrics(const std::string& run) {
  Metrics metrics;
  const std::string text = read_text(run + "/metrics.jsonl");
  INFO(run << "/metrics.jsonl:\n" << text);
  REQUIRE((text.empty() || text.back() == '\n'));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record;
    REQUIRE_NOTHROW(record = nlohmann::json::parse(line));
    auto& split = record.at("split") == "train" ? metrics.train : metrics.valid;
    const int64_t step = record.at("step").get<int64_t>();
    INFO("step " << step << " " << record.at("split"));
    REQUIRE(split.emplace(step, record).second);
  }
  return metrics;
}

// The lines present equal the uninterrupted run's: the training steps 1..n, each loss bit for bit, and
// validations at steps where it validated, with its loss and accuracy.
void check_metrics_agree(const Metrics& metrics, const Metrics& reference) {
  int64_t expected_step = 1;
  for (const auto& [step, record] : metrics.train) {
    INFO("train step " << step);
    REQUIRE(step == expected_step++);
    CHECK(record.at("loss").get<double>() == reference.train.at(step).at("loss").get<double>());
  }
  for (const auto& [step, record] : metrics.valid) {
    INFO("valid step " << step);
    REQUIRE(reference.valid.count(step));
    CHECK(record.at("loss").get<double>() == reference.valid.at(step).at("loss").get<double>());
    CHECK(record.at("token_accuracy").get<double>() == reference.valid.at(step).at("token_accuracy").get<double>());
  }
}

// Every checkpoint file loads (whole, parameters finite, training state present, a step checkpoint's
// step the one in its name), and metrics.jsonl holds the training lines up to the newest one's step.
void check_checkpoints_load(const std::string& run, const Metrics& metrics) {
  int64_t newest_step = 0;
  for (const auto& entry : fs::directory_iterator(run + "/checkpoints")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".tmp") continue;  // a write cut short: never read (removed at the next start)
    INFO(entry.path().string());
    agf::train::LoadedModel loaded;
    REQUIRE_NOTHROW(loaded = agf::train::load_model(entry.path().string()));
    REQUIRE(loaded.checkpoint.state.has_value());
    if (name != "best.safetensors") {
      CHECK(name == fmt::format("step_{:08d}.safetensors", loaded.checkpoint.state->step));
      newest_step = std::max(newest_step, loaded.checkpoint.state->step);
    }
  }
  CHECK(static_cast<int64_t>(metrics.train.size()) >= newest_step);
}

// The two checkpoints hold the same tensors, bit for bit (their metadata differs: elapsed time).
void check_same_tensors(const std::string& path, const std::string& reference_path) {
  INFO(path << " against " << reference_path);
  const auto file = agf::train::load_safetensors(path), reference = agf::train::load_safetensors(reference_path);
  REQUIRE(file.tensors.size() == reference.tensors.size());
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    INFO(file.tensors[i].first);
    REQUIRE(file.tensors[i].first == reference.tensors[i].first);
    CHECK(file.tensors[i].second.to_double_vector() == reference.tensors[i].second.to_double_vector());
  }
}

// Where a kill is aimed: at a moment after the start, or inside the n-th file write of the started run.
struct Aim {
  bool inside_write = false;
  std::chrono::microseconds delay{0};  // after the start; or after the write began
  int write_number = 0;
  std::string text() const {
    return inside_write ? fmt::format("{} us into write {}", delay.count(), write_number)
                        : fmt::format("{} ms after the start", delay.count() / 1000);
  }
};

struct Outcome {
  bool killed = false;
  int exit_status = -1;              // when it finished by itself
  std::set<std::string> cut_writes;  // the "*.tmp" files this run created and neither renamed nor removed
};

std::vector<std::string> partial_writes(const std::string& run) {
  std::vector<std::string> found;
  for (const std::string& folder : {run, run + "/checkpoints"}) {
    for (const auto& entry : fs::directory_iterator(folder)) {
      if (entry.path().extension() == ".tmp") found.push_back(entry.path().filename().string());
    }
  }
  return found;
}

// Starts `agf train`, kills it with SIGKILL as `aim` says (or lets it finish when `aim` is null).
Outcome run_and_kill(const std::string& arguments, const std::string& run, const std::string& log, const Aim* aim) {
  const int events = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  REQUIRE(events >= 0);
  for (const std::string& folder : {run, run + "/checkpoints"}) {
    REQUIRE(::inotify_add_watch(events, folder.c_str(), IN_CREATE | IN_MODIFY | IN_MOVED_FROM | IN_DELETE) >= 0);
  }
  const auto start = Clock::now();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::string command = "exec " + std::string(AGF_BINARY) + " " + arguments + " >>" + log + " 2>&1";
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int writes_begun = 0, status = 0;
  bool sent = false, metrics_modified = false;
  std::set<std::string> open_writes;  // "*.tmp" created, not yet renamed or removed
  // Reads the queued events; kills the run when the write it waits for begins.
  auto read_events = [&] {
    alignas(inotify_event) char buffer[4096];
    for (ssize_t length; (length = ::read(events, buffer, sizeof buffer)) > 0;) {
      for (char* at = buffer; at < buffer + length;) {
        const auto* event = reinterpret_cast<const inotify_event*>(at);
        at += sizeof(inotify_event) + event->len;
        const std::string name = event->len ? event->name : "";
        if (event->mask & IN_ISDIR) continue;
        const bool temporary = fs::path(name).extension() == ".tmp";
        if (temporary && (event->mask & IN_CREATE)) open_writes.insert(name);
        if (temporary && (event->mask & (IN_MOVED_FROM | IN_DELETE))) open_writes.erase(name);
        // A write begins: a file created (agf creates "*.tmp" files only, but a version that wrote in place
        // is aimed at as well), or metrics.jsonl changed for the first time since the start (the first line
        // appended; or, in a version that rewrote it in place at a resume, the truncation).
        const bool metrics_changed = name == "metrics.jsonl" && (event->mask & IN_MODIFY) && !metrics_modified;
        if (metrics_changed) metrics_modified = true;
        if (!(event->mask & IN_CREATE) && !metrics_changed) continue;
        if (!sent && aim && aim->inside_write && ++writes_begun == aim->write_number) {
          std::this_thread::sleep_for(aim->delay);
          ::kill(child, SIGKILL);
          sent = true;
        }
      }
    }
  };
  while (!sent) {
    if (::waitpid(child, &status, WNOHANG) == child) break;  // it finished first
    REQUIRE(Clock::now() - start < std::chrono::seconds(120));
    int timeout_ms = 5;
    if (aim && !aim->inside_write) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(start + aim->delay - Clock::now()).count();
      if (left <= 0) {
        ::kill(child, SIGKILL);
        sent = true;
        continue;
      }
      timeout_ms = static_cast<int>(std::min<int64_t>(left, timeout_ms));
    }
    pollfd ready{events, POLLIN, 0};
    if (::poll(&ready, 1, timeout_ms) > 0) read_events();
  }
  if (sent) REQUIRE(::waitpid(child, &status, 0) == child);
  read_events();  // the run is gone: every event it caused is queued
  ::close(events);
  Outcome outcome;
  outcome.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.cut_writes = open_writes;
  return outcome;
}

}  // namespace

TEST_CASE("training killed with SIGKILL at random moments resumes to the uninterrupted run, bit for bit",
          "[train][chaos]") {
  const char* seed_text = std::getenv("AGF_CHAOS_SEED");
  const uint64_t seed = seed_text ? std::strtoull(seed_text, nullptr, 10) : std::random_device{}();
  std::cout << "kill campaign: seed " << seed << " (AGF_CHAOS_SEED=" << seed << " repeats its choices)" << std::endl;
  INFO("kill campaign seed " << seed << " (AGF_CHAOS_SEED=" << seed << " repeats its choices)");
  std::mt19937_64 random(seed);
  const auto campaign_start = Clock::now();

  agf::test::ScratchDir scratch;
  const std::string data = agf::test::prepare_tiny_fixture(scratch);
  const std::string reference_run = scratch.file("reference");
  const auto reference_start = Clock::now();
  REQUIRE(run_agf("train --data " + data + " --out " + reference_run + train_flags).status == 0);
  const auto reference_time = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - reference_start);
  const Metrics reference = read_metrics(reference_run);
  REQUIRE(reference.train.size() == kMaxSteps);
  REQUIRE(reference.valid.size() == 3);

  int kills = 0, kills_in_checkpoint_writes = 0;
  std::map<std::string, int> left_behind;  // kind of partial write -> kills that left one
  // kKills kills, and more (up to kMaxKills) until two have landed inside checkpoint writes: on a fast machine
  // a checkpoint of the tiny model is written in less time than the aim's spread, and 40 kills left only one.
  const auto enough = [&] { return kills >= kMaxKills || (kills >= kKills && kills_in_checkpoint_writes >= 2); };
  for (int round = 1; !enough(); ++round) {
    REQUIRE(round <= 40);  // each round is one run, killed until it finishes: 40 kills take 2 or 3, 160 about 10
    const std::string run = scratch.file("round-" + std::to_string(round)), log = run + ".log";
    fs::create_directories(run + "/checkpoints");  // to be watched from the first start on
    for (int start = 1;; ++start) {
      // Half the kills at a moment anywhere in the next third of a run's time (starting up, a step, a
      // validation, a write); half inside the 1st to 4th write: at a resume the rewrite of metrics.jsonl,
      // the first line appended to it, then checkpoints and best.safetensors.
      Aim aim;
      aim.inside_write = std::bernoulli_distribution(0.5)(random);
      if (aim.inside_write) {
        aim.write_number = std::uniform_int_distribution<int>(1, 4)(random);
        aim.delay = std::chrono::microseconds(
            std::bernoulli_distribution(1.0 / 3)(random) ? 0 : std::uniform_int_distribution<int64_t>(0, 2000)(random));
      } else {
        aim.delay = std::chrono::microseconds(
            std::uniform_int_distribution<int64_t>(0, reference_time.count() / 3)(random));
      }
      const bool last = enough();  // enough kills: this start runs to the end
      const std::string arguments = "train --data " + data + " --out " + run + train_flags +
                                    (start > 1 ? " --resume" : "");
      const Outcome outcome = run_and_kill(arguments, run, log, last ? nullptr : &aim);
      INFO("round " << round << ", start " << start << (last ? "" : ", kill aimed " + aim.text()) << "\n"
                    << read_text(log));
      if (!outcome.killed) {
        REQUIRE(outcome.exit_status == 0);
        break;
      }
      ++kills;
      std::string cut;
      for (const std::string& name : outcome.cut_writes) {
        const std::string kind = name.rfind("step_", 0) == 0 ? "step_*.safetensors.tmp" : name;
        ++left_behind[kind];
        if (kind != "metrics.jsonl.tmp") ++kills_in_checkpoint_writes;
        cut += " " + name;
      }
      const Metrics metrics = read_metrics(run);
      std::cout << fmt::format("kill {:2}: round {} start {}, aimed {}: at step {}{}", kills, round, start, aim.text(),
                               metrics.train.size(), cut.empty() ? "" : ", inside the write of" + cut)
                << std::endl;
      check_metrics_agree(metrics, reference);
      check_checkpoints_load(run, metrics);
    }
    // The run, killed and resumed, ends as the uninterrupted one: every loss, the final and the best weights.
    INFO("round " << round << " finished");
    const Metrics metrics = read_metrics(run);
    CHECK(metrics.train.size() == reference.train.size());
    CHECK(metrics.valid.size() == reference.valid.size());
    check_metrics_agree(metrics, reference);
    const std::string last = fmt::format("/checkpoints/step_{:08d}.safetensors", kMaxSteps);
    check_same_tensors(run + last, reference_run + last);
    check_same_tensors(run + "/checkpoints/best.safetensors", reference_run + "/checkpoints/best.safetensors");
    CHECK(partial_writes(run).empty());
  }
  std::string landed;
  for (const auto& [kind, count] : left_behind) landed += fmt::format(", {} x{}", kind, count);
  std::cout << fmt::format("kill campaign: {} kills in {:.1f} s; writes they cut short{}", kills,
                           std::chrono::duration<double>(Clock::now() - campaign_start).count(),
                           landed.empty() ? std::string(": none") : landed)
            << std::endl;
  CHECK(kills >= 20);
  // Kills land inside checkpoint writes (the .tmp they leave shows it), not only between them.
  CHECK(kills_in_checkpoint_writes >= 2);
}
