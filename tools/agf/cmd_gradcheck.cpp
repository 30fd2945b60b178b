// agf gradcheck: finite-difference checks of every op's hand-written backward (autograd/gradcheck.h).
//
//   agf gradcheck [--all]                                   every registered check
//   agf gradcheck --list                                    their names and what each covers
//   agf gradcheck --op NAME                                 one check
//   agf gradcheck --op attention                            every attention check
//   agf gradcheck --op attention --pos SCHEME [--pcmv] [--causal]          one attention configuration
//   agf gradcheck --op attention --pos agf-m [--pcmv] [--causal] --explain the backward, step by step
//   agf gradcheck --device cuda ...                         the same checks, evaluated on the GPU
#include <fmt/core.h>

#include <chrono>

#include "autograd/attention_checks.h"
#include "autograd/gradcheck.h"
#include "tools/agf/attention_explain.h"
#include "tools/agf/command.h"
#include "train/device_flag.h"

namespace {

struct GradcheckFlags {
  bool all = false;
  bool list = false;
  std::string op;
  std::string pos;  // attention only
  bool pcmv = false, causal = false, explain = false;
  std::string device = "cpu";
};

// The checks the flags select.
std::vector<const agf::OpCheck*> select_checks(const GradcheckFlags& flags) {
  const auto& checks = agf::op_checks();
  std::vector<const agf::OpCheck*> selected;
  const bool attention = flags.op == "attention";
  AGF_CHECK(attention || (flags.pos.empty() && !flags.pcmv && !flags.causal && !flags.explain),
            "gradcheck: --pos, --pcmv, --causal and --explain go with --op attention");
  if (attention && !flags.pos.empty()) {
    const agf::ops::PositionalScheme scheme = agf::ops::parse_positional_scheme(flags.pos);
    AGF_CHECK(!flags.pcmv || agf::ops::has_coefficient(scheme),
              "gradcheck: --pcmv applies to the coefficient schemes (agf-b, agf-m, agf-f, alibi-mult), not to '{}'",
              flags.pos);
    const std::string name = agf::attention_check_name(scheme, flags.pcmv, flags.causal);
    const agf::OpCheck* check = agf::find_op_check(name);
    AGF_CHECK(check != nullptr, "gradcheck: no check named '{}'", name);
    selected.push_back(check);
  } else if (attention) {
    AGF_CHECK(!flags.pcmv && !flags.causal, "gradcheck: --pcmv and --causal need --pos SCHEME");
    for (const agf::OpCheck& check : checks) {
      if (check.name.starts_with("attention:")) selected.push_back(&check);
    }
  } else if (!flags.op.empty()) {
    const agf::OpCheck* check = agf::find_op_check(flags.op);
    AGF_CHECK(check != nullptr, "gradcheck: no op named '{}' (see `agf gradcheck --list`)", flags.op);
    selected.push_back(check);
  } else {
    for (const agf::OpCheck& check : checks) selected.push_back(&check);
  }
  return selected;
}

int run_gradcheck(const GradcheckFlags& flags) {
  if (flags.list) {
    for (const agf::OpCheck& check : agf::op_checks()) fmt::print("{:<24} {}\n", check.name, check.description);
    return 0;
  }
  if (flags.explain) {
    AGF_CHECK(flags.op == "attention" && !flags.pos.empty(), "gradcheck: --explain needs --op attention --pos SCHEME");
    return agf::cli::explain_attention(agf::ops::parse_positional_scheme(flags.pos), flags.pcmv, flags.causal);
  }
  const std::vector<const agf::OpCheck*> selected = select_checks(flags);
  const agf::Device device = agf::train::usable_device(flags.device);
  const agf::GradcheckDeviceScope on_device(device);
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
      command.add_option("--op", flags->op, "Check one op by name ('attention': every attention check)");
      command.add_option("--pos", flags->pos,
                         "With --op attention: one positional scheme (none, rope, alibi, alibi-mult, t5, kerple-log, "
                         "kerple-power, agf-b, agf-m, agf-f)");
      command.add_flag("--pcmv", flags->pcmv, "With --pos: PCM-V on (coefficient schemes)");
      command.add_flag("--causal", flags->causal, "With --pos: causal mask (decoder self-attention)");
      command.add_option("--device", flags->device, "Evaluate the checks on cpu or cuda[:N] (inputs stay f64)")
          ->capture_default_str();
      command.add_flag("--explain", flags->explain,
                       "With --op attention --pos agf-b|agf-m|agf-f: print every intermediate of a one-head, "
                       "four-token example (docs/agf-backprop.md)");
      command.callback([flags] {
        const int status = run_gradcheck(*flags);
        if (status != 0) throw CLI::RuntimeError(status);
      });
    }};

}  // namespace
