// agf bench: throughput of ops and training steps. Each benchmark is a subcommand in its own
// bench_*.cpp file, registered with agf::cli::BenchRegistration.
#include <algorithm>

#include "tools/agf/command.h"

namespace {

const agf::cli::Registration registration{
    "bench", "Measure throughput of ops and training steps", [](CLI::App& command) {
      command.require_subcommand(1);
      auto& benches = agf::cli::bench_commands();
      std::sort(benches.begin(), benches.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
      for (auto& bench : benches) bench.setup(*command.add_subcommand(bench.name, bench.description));
    }};

}  // namespace
