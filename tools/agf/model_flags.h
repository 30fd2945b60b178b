#pragma once
// The model flags shared by `agf train`, `agf init`, `agf bench train` and `agf experiment`:
// a preset (SPEC §6) and the positional scheme (SPEC §5), turned into a TransformerConfig after parsing.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "nn/transformer_config.h"
#include "tools/agf/flag_checks.h"

namespace agf::cli {

struct ModelFlags {
  std::string preset = "cpu-small";
  std::string pos = "agf-m";
  bool pcmv = false;
  bool abs_pe = false;
  bool pre_norm = false;
  int64_t max_distance = 256;
  double k = 2.0;
  bool learnable_k = false;
  std::optional<double> dropout;

  void add_to(CLI::App& command) {
    command.add_option("--preset", preset, "Model size: paper-big, base, cpu-small, cpu-mini (or tiny, for tests)")
        ->capture_default_str();
    command
        .add_option("--pos", pos,
                    "Positional scheme: sinusoidal, none, rope, alibi, alibi-mult, t5, kerple-log, "
                    "kerple-power, agf-b, agf-m, agf-f")
        ->capture_default_str();
    command.add_flag("--pcmv", pcmv, "Apply the positional coefficient to the values too (coefficient schemes)");
    command.add_flag("--abs-pe", abs_pe, "Add the sinusoidal embedding on top of the scheme (the paper's +PE)");
    command.add_flag("--pre-norm", pre_norm, "Pre-norm residual blocks (default: post-norm)");
    command.add_option("--max-distance", max_distance, "L: the longest distance with its own lc2/lc3 entry")
        ->capture_default_str()
        ->check(agf::cli::positive_number());
    command.add_option("--k", k, "The LC1 exponent k (its initial value with --learnable-k)")
        ->capture_default_str()
        ->check(agf::cli::finite_number());
    command.add_flag("--learnable-k", learnable_k, "Learn the LC1 exponent");
    command.add_option("--dropout", dropout, "Override the preset's dropout")
        ->check(agf::cli::number_between(0.0, 0.99));
  }

  nn::TransformerConfig config(int64_t vocabulary_size) const {
    nn::TransformerConfig config = nn::TransformerConfig::from_preset(preset);
    config.pos = pos;
    config.pcmv = pcmv;
    config.abs_pe = abs_pe;
    config.pre_norm = pre_norm;
    config.max_distance = max_distance;
    config.k = k;
    config.learnable_k = learnable_k;
    if (dropout) config.dropout = *dropout;
    config.vocabulary_size = vocabulary_size;
    config.validate();
    return config;
  }
};

}  // namespace agf::cli
