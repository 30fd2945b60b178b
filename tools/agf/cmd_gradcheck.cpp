// agf gradcheck: finite-difference checks of every op's hand-written backward (autograd/gradcheck.h).
#include <fmt/core.h>

#include <chrono>

#include "autograd/gradcheck.h"
#include "tools/agf/command.h"

namespace {

struct GradcheckFlags {
  bool all = false;
  bool list = false;
  std::string op;
};

int run_gradcheck(const GradcheckFlags& flags) {
  const auto& checks = agf::op_checks();
  if (flags.list) {
    for (const agf::OpCheck& check : checks) fmt::print("{:<24} {}\n", check.name, check.description);
    return 0;
  }
  std::vector<const agf::OpCheck*> selected;
  if (!flags.op.empty()) {
    const agf::OpCheck* check = agf::find_op_check(flags.op);
    AGF_CHECK(check != nullptr, "gradcheck: no op named '{}' (see `agf gradcheck --list`)", flags.op);
    selected.push_back(check);
  } else {
    for (const agf::OpCheck& check : checks) selected.push_back(&check);
  }
  int failures = 0;
  for (const agf::OpCheck* check : selected) {
    const auto start = std::chrono::steady_clock::now();
    const agf::GradcheckResult result = check->run();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{:<24} max relative error {:.2e}  {}  ({:.2f} s)\n", check->name, result.worst,
               result.passed ? "ok" : "FAILED", seconds);
    failures += result.passed ? 0 : 1;
  }
  fmt::print("{} checked, {} failed\n", selected.size(), failures);
  return failures == 0 ? 0 : 1;
}

const agf::cli::Registration registration{
    "gradcheck", "Check every op's backward against central differences in f64", [](CLI::App& command) {
      auto flags = std::make_shared<GradcheckFlags>();
      command.add_flag("--all", flags->all, "Check every registered op (the default)");
      command.add_flag("--list", flags->list, "Print the op names and what each check covers");
      command.add_option("--op", flags->op, "Check one op by name");
      command.callback([flags] {
        const int status = run_gradcheck(*flags);
        if (status != 0) throw CLI::RuntimeError(status);
      });
    }};

}  // namespace
