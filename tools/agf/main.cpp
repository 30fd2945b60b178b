// The `agf` program: one binary, one subcommand per file (see command.h). Errors go to stderr with a
// non-zero exit status: 1 for bad input (agf::Error; a filesystem error, which names its path), 2 for bad
// flags, 3 for anything unexpected.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>

#include "core/error.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "tools/agf/openmp_spin.h"
#include "train/distributed.h"

namespace agf::cli {
std::vector<Command>& commands() {
  static std::vector<Command> registered;
  return registered;
}
std::vector<Command>& bench_commands() {
  static std::vector<Command> registered;
  return registered;
}
}  // namespace agf::cli

namespace {

// Runs the command line; its exit status.
int run(int argc, char** argv) {
  CLI::App app{"agf: a from-scratch deep-learning framework for Attention's Gravitational Field", "agf"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "agf 0.1.0");
  auto& commands = agf::cli::commands();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& command : commands) {
    command.setup(*app.add_subcommand(command.name, command.description));
  }
  agf::cli::require_whole_numbers(app);
  // Under mpirun an error names the process it happened in: " (rank 1 of 2)".
  auto where = [] { return agf::train::started_world_label(); };
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& error) {  // a subcommand that ran and reports failure
    return error.get_exit_code();
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  } catch (const agf::Error& error) {
    std::fprintf(stderr, "agf: error%s: %s\n", where().c_str(), error.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& error) {  // a path that cannot be made, read or written
    std::fprintf(stderr, "agf: error%s: %s\n", where().c_str(), error.what());
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "agf: unexpected error%s: %s\n", where().c_str(), error.what());
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  agf::cli::use_short_openmp_spin(argv);
  // One of several processes under mpirun: MPI is finished, or, after a failure, the whole job aborted so
  // that no other process waits forever for this one (train/distributed.h).
  return agf::train::leave_world(run(argc, argv));
}
