// agf inspect: what a checkpoint learned — the gravitational coefficient C(D) of every self-attention
// module, per head and direction, on log–log axes beside the initial curve 1/(1 + D/24)^2; and, for each
// curve, whether it still decays as a power law (train/decay_fit.h), printed as a table.
#include <fmt/core.h>

#include <cmath>
#include <optional>

#include "data/text_file.h"
#include "ops/attention_positional.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"
#include "train/checkpoint.h"
#include "train/decay_fit.h"
#include "train/svg_plot.h"

namespace {

// Each distance is a point of every curve: past this many the SVG (and the coefficient table) grows to
// gigabytes without showing more.
constexpr int64_t kMaxPlottedDistance = 100000;

struct InspectFlags {
  std::string checkpoint, out;
  int64_t max_distance = 256;
  std::optional<int64_t> fit_max_distance;
};

// C[δ, h, D] of one module for D = 0 .. distances-1 (agf-f: the mean over features j).
std::vector<double> coefficient_table(const agf::nn::PositionalEncoding& encoding, int64_t heads, int64_t head_dim,
                                      int64_t distances) {
  const agf::PositionalVariables variables = encoding.variables();
  agf::ops::PositionalParameters parameters;
  for (const agf::ops::PositionalParameterSpec& spec : agf::ops::kPositionalParameterTable) {
    if (variables[spec.id].defined()) parameters[spec.id] = variables[spec.id].data();
  }
  agf::ops::AttentionOptions options;
  encoding.configure(options);
  const agf::Tensor table = agf::ops::positional_table_forward(parameters, options, {heads, head_dim, distances});
  const agf::Tensor per_distance = table.dim() == 4 ? table.contiguous() : table;
  std::vector<double> values = per_distance.to_double_vector();
  if (table.dim() == 4) {  // average over the feature axis j
    std::vector<double> mean(static_cast<std::size_t>(2 * heads * distances), 0.0);
    for (std::size_t i = 0; i < mean.size(); ++i) {
      for (int64_t j = 0; j < head_dim; ++j) mean[i] += values[i * head_dim + j] / static_cast<double>(head_dim);
    }
    return mean;
  }
  return values;
}

// "G | r | k" of a power-law fit; where r sits at an end of its range the degenerate parameters show as "—"
// (train/decay_fit.h): at the low end G, at the high end G and k (the curve is an exponential there).
std::string power_law_columns(const agf::train::DecayFit& fit) {
  if (fit.law == agf::train::DecayLaw::reaches_zero) return "— | — | —";
  if (!fit.r_at_bound) return fmt::format("{:.4g} | {:.4g} | {:.4g}", fit.power_G, fit.power_r, fit.power_k);
  if (fit.power_r < 1) return fmt::format("— | ≤ {:g} | {:.4g}", agf::train::kPowerLawMinR, fit.power_k);
  return fmt::format("— | ≥ {:g} | —", agf::train::kPowerLawMaxR);
}

void run_inspect(const InspectFlags& flags) {
  const auto loaded = agf::train::load_model(flags.checkpoint);
  const auto& config = loaded.checkpoint.config;
  const std::string scheme = config.pos;
  AGF_CHECK(scheme == "agf-b" || scheme == "agf-m" || scheme == "agf-f" || scheme == "alibi-mult",
            "inspect: {} uses '{}'; the gravitational curves exist for agf-b, agf-m, agf-f and alibi-mult",
            flags.checkpoint, scheme);
  const int64_t heads = config.heads, distances = flags.max_distance + 1;
  const int64_t fitted = flags.fit_max_distance.value_or(flags.max_distance);
  AGF_CHECK(fitted >= 3 && fitted <= flags.max_distance,
            "inspect: --fit-max-distance {} must be from 3 to --max-distance {}", fitted, flags.max_distance);
  std::vector<double> fit_distances;
  for (int64_t d = 1; d <= fitted; ++d) fit_distances.push_back(static_cast<double>(d));
  fmt::print("Fits of |C(D)| for D = 1..{}{}:\n", fitted,
             scheme == "agf-m" || scheme == "agf-f"
                 ? " (past the longest distance training saw, lc2 and lc3 keep their initial 1: "
                   "--fit-max-distance sets it)"
                 : "");
  fmt::print("| module | δ | head | power law G | r | k | R² | exponential G | λ | R² | decay |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  int power_laws = 0, curves = 0;
  std::vector<agf::train::Panel> panels;
  std::vector<double> initial_x, initial_y;
  for (int64_t d = 1; d < distances; ++d) {
    initial_x.push_back(static_cast<double>(d));
    initial_y.push_back(1.0 / std::pow(1.0 + static_cast<double>(d) / 24.0, 2.0));
  }
  for (const auto& [name, encoding] : loaded.model->positional_encodings()) {
    const std::vector<double> table = coefficient_table(*encoding, heads, config.head_dim(), distances);
    const bool causal = name.rfind("decoder", 0) == 0;
    for (int direction = 0; direction < (causal ? 1 : 2); ++direction) {
      agf::train::Panel panel;
      const std::string module = name.substr(0, name.find(".self_attn"));
      panel.title = fmt::format("{} · {}", module,
                                direction == 0 ? "key at/before query (δ=0)" : "key after query (δ=1)");
      for (int64_t h = 0; h < heads; ++h) {
        agf::train::Series series{
            fmt::format("head {}", h), {}, {}, agf::train::palette_color(static_cast<std::size_t>(h))};
        for (int64_t d = 1; d < distances; ++d) {
          series.x.push_back(static_cast<double>(d));
          series.y.push_back(std::abs(table[(direction * heads + h) * distances + d]));
        }
        panel.series.push_back(std::move(series));
        std::vector<double> coefficients;
        for (int64_t d = 1; d <= fitted; ++d) coefficients.push_back(table[(direction * heads + h) * distances + d]);
        const agf::train::DecayFit fit = agf::train::fit_decay(fit_distances, coefficients);
        fmt::print("| {} | {} | {} | {} | {:.4f} | {:.4g} | {:.4g} | {:.4f} | {} |\n", module, direction, h,
                   power_law_columns(fit), fit.power_r2, fit.exponential_G, fit.exponential_lambda, fit.exponential_r2,
                   agf::train::decay_law_name(fit.law));
        power_laws += fit.law == agf::train::DecayLaw::power_law;
        ++curves;
      }
      if (scheme != "alibi-mult") panel.series.push_back({"initial", initial_x, initial_y, "#888888", true});
      panels.push_back(std::move(panel));
    }
  }
  const std::string title = fmt::format("{}: {} {} — learned positional coefficient C(D)", flags.checkpoint,
                                        config.preset, config.scheme_label());
  agf::data::write_file(flags.out,
                        agf::train::render_panels(title, panels, 2, {"distance D", agf::train::AxisScale::log},
                                                  {"|C(D)|", agf::train::AxisScale::log}));
  fmt::print("{} of {} curves decay as a power law\n", power_laws, curves);
  fmt::print("{} panels ({} heads each) written to {}\n", panels.size(), heads, flags.out);
}

const agf::cli::Registration registration{
    "inspect", "Plot the learned gravitational curves C(D) of a checkpoint (SVG); fit each: power law or exponential",
    [](CLI::App& command) {
      auto flags = std::make_shared<InspectFlags>();
      command.add_option("--checkpoint", flags->checkpoint, "Model checkpoint")->required()->check(CLI::ExistingFile);
      command.add_option("--out", flags->out, "Output .svg")->required();
      command.add_option("--max-distance", flags->max_distance, "Largest distance D plotted")
          ->capture_default_str()
          ->check(agf::cli::number_between(1, kMaxPlottedDistance));
      command
          .add_option("--fit-max-distance", flags->fit_max_distance,
                      "Fit each curve on D = 1..N, N the longest distance training saw (default: --max-distance)")
          ->check(agf::cli::number_between(3, kMaxPlottedDistance));
      command.callback([flags] { run_inspect(*flags); });
    }};

}  // namespace
