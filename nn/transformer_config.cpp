#include "nn/transformer_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string_view>
#include <tuple>

#include "core/error.h"
#include "core/number_text.h"

namespace agf::nn {

namespace {
constexpr std::array<std::string_view, 11> kSchemes = {
    "sinusoidal", "none", "rope", "alibi", "alibi-mult", "t5", "kerple-log", "kerple-power", "agf-b", "agf-m", "agf-f"};
bool is_coefficient_scheme(const std::string& pos) {
  return pos == "alibi-mult" || pos == "agf-b" || pos == "agf-m" || pos == "agf-f";
}

// Upper bounds far above any model agf can train (paper-big: d_model 1024, 3 + 3 layers, ~100M weights),
// so that a config read from an edited or corrupt checkpoint fails here instead of allocating for minutes.
constexpr int64_t kMaxWidth = 1 << 16;       // d_model, heads, ffn
constexpr int64_t kMaxLayers = 1024;         // encoder or decoder
constexpr int64_t kMaxVocabulary = 1 << 24;  // token ids are int32
constexpr int64_t kMaxDistance = 1 << 20;    // L
constexpr double kMaxParameters = 1e10;

}  // namespace

double TransformerConfig::approximate_parameters() const {
  const double d = static_cast<double>(d_model), f = static_cast<double>(ffn);
  // Each self-attention module of agf-m and agf-f has its own lc2 [2, H, L], and agf-f its lc3 [2, H, L, d/H]:
  // with a large L these outgrow everything else.
  const double L = static_cast<double>(max_distance), H = static_cast<double>(heads);
  const double positional = (pos == "agf-m" || pos == "agf-f" ? 2 * H * L : 0) + (pos == "agf-f" ? 2 * L * d : 0);
  const double encoder_layer = 4 * d * d + 2 * d * f + positional, decoder_layer = 8 * d * d + 2 * d * f + positional;
  return static_cast<double>(vocabulary_size) * d + static_cast<double>(encoder_layers) * encoder_layer +
         static_cast<double>(decoder_layers) * decoder_layer;
}

TransformerConfig TransformerConfig::from_preset(const std::string& name) {
  TransformerConfig config;
  config.preset = name;
  if (name == "paper-big") {
    config.d_model = 1024, config.heads = 16, config.ffn = 4096, config.encoder_layers = 3, config.decoder_layers = 3;
    config.dropout = 0.3;
  } else if (name == "base") {
    config.d_model = 512, config.heads = 8, config.ffn = 2048, config.encoder_layers = 6, config.decoder_layers = 6;
    config.dropout = 0.1;
  } else if (name == "cpu-small") {
    config.d_model = 256, config.heads = 4, config.ffn = 1024, config.encoder_layers = 3, config.decoder_layers = 3;
    config.dropout = 0.1;
  } else if (name == "cpu-mini") {  // the converged grid's size (docs/results-converged.md)
    config.d_model = 128, config.heads = 4, config.ffn = 512, config.encoder_layers = 3, config.decoder_layers = 3;
    config.dropout = 0.1;
  } else if (name == "tiny") {  // for tests and smoke runs: not part of the paper
    config.d_model = 32, config.heads = 2, config.ffn = 64, config.encoder_layers = 1, config.decoder_layers = 1;
    config.dropout = 0.0;
  } else {
    fail("unknown preset '{}' (expected paper-big, base, cpu-small, cpu-mini or tiny)", name);
  }
  return config;
}

void TransformerConfig::validate() const {
  AGF_CHECK(d_model > 0 && heads > 0 && ffn > 0, "model config: d_model, heads and ffn must be positive");
  AGF_CHECK(d_model % heads == 0, "model config: d_model {} is not divisible by heads {}", d_model, heads);
  AGF_CHECK(encoder_layers >= 0 && decoder_layers >= 1, "model config: needs at least one decoder layer");
  AGF_CHECK(dropout >= 0.0 && dropout < 1.0, "model config: dropout must be in [0, 1), got {}", dropout);
  AGF_CHECK(vocabulary_size > 0, "model config: vocabulary size must be positive, got {}", vocabulary_size);
  AGF_CHECK(std::find(kSchemes.begin(), kSchemes.end(), pos) != kSchemes.end(),
            "unknown positional scheme '{}' (expected one of: {})", pos, fmt::join(kSchemes, ", "));
  AGF_CHECK(!pcmv || is_coefficient_scheme(pos),
            "--pcmv applies to coefficient schemes (agf-b, agf-m, agf-f, alibi-mult), not to '{}'", pos);
  AGF_CHECK(max_distance >= 1, "model config: max distance L must be at least 1, got {}", max_distance);
  AGF_CHECK(std::isfinite(k), "model config: the LC1 exponent k must be finite, got {}", k);
  for (const auto& [name, value, limit] :
       {std::tuple{"d_model", d_model, kMaxWidth}, std::tuple{"heads", heads, kMaxWidth},
        std::tuple{"ffn", ffn, kMaxWidth}, std::tuple{"encoder_layers", encoder_layers, kMaxLayers},
        std::tuple{"decoder_layers", decoder_layers, kMaxLayers},
        std::tuple{"vocabulary_size", vocabulary_size, kMaxVocabulary},
        std::tuple{"max_distance", max_distance, kMaxDistance}}) {
    AGF_CHECK(value <= limit, "model config: {} {} is above agf's limit of {}", name, value, limit);
  }
  AGF_CHECK(approximate_parameters() <= kMaxParameters,
            "model config: about {:.3g} parameters, above agf's limit of {:.0e}", approximate_parameters(),
            kMaxParameters);
  AGF_CHECK(pos != "rope" || head_dim() % 2 == 0, "rope needs an even head size, got {}", head_dim());
}

std::map<std::string, std::string> TransformerConfig::to_metadata() const {
  return {{"agf.config.preset", preset},
          {"agf.config.d_model", std::to_string(d_model)},
          {"agf.config.heads", std::to_string(heads)},
          {"agf.config.ffn", std::to_string(ffn)},
          {"agf.config.encoder_layers", std::to_string(encoder_layers)},
          {"agf.config.decoder_layers", std::to_string(decoder_layers)},
          {"agf.config.dropout", fmt::format("{}", dropout)},
          {"agf.config.pre_norm", pre_norm ? "true" : "false"},
          {"agf.config.vocabulary_size", std::to_string(vocabulary_size)},
          {"agf.config.pos", pos},
          {"agf.config.pcmv", pcmv ? "true" : "false"},
          {"agf.config.abs_pe", abs_pe ? "true" : "false"},
          {"agf.config.max_distance", std::to_string(max_distance)},
          {"agf.config.k", fmt::format("{}", k)},
          {"agf.config.learnable_k", learnable_k ? "true" : "false"}};
}

TransformerConfig TransformerConfig::from_metadata(const std::map<std::string, std::string>& metadata) {
  auto get = [&](const std::string& key) -> const std::string& {
    const auto found = metadata.find("agf.config." + key);
    AGF_CHECK(found != metadata.end(), "checkpoint metadata lacks 'agf.config.{}' (not an agf model checkpoint?)", key);
    return found->second;
  };
  auto integer = [&](const std::string& key) {
    const std::optional<int64_t> value = parse_number<int64_t>(get(key));
    AGF_CHECK(value.has_value(), "checkpoint metadata 'agf.config.{}' is not an integer: '{}'", key, get(key));
    return *value;
  };
  auto real = [&](const std::string& key) {
    const std::optional<double> value = parse_number<double>(get(key));
    AGF_CHECK(value.has_value() && std::isfinite(*value),
              "checkpoint metadata 'agf.config.{}' is not a finite number: '{}'", key, get(key));
    return *value;
  };
  auto boolean = [&](const std::string& key) { return get(key) == "true"; };
  TransformerConfig config;
  config.preset = get("preset");
  config.d_model = integer("d_model");
  config.heads = integer("heads");
  config.ffn = integer("ffn");
  config.encoder_layers = integer("encoder_layers");
  config.decoder_layers = integer("decoder_layers");
  config.dropout = real("dropout");
  config.pre_norm = boolean("pre_norm");
  config.vocabulary_size = integer("vocabulary_size");
  config.pos = get("pos");
  config.pcmv = boolean("pcmv");
  config.abs_pe = boolean("abs_pe");
  config.max_distance = integer("max_distance");
  config.k = real("k");
  config.learnable_k = boolean("learnable_k");
  config.validate();
  return config;
}

std::string TransformerConfig::scheme_label() const {
  std::string label = pos;
  if (pcmv) label += "+pcmv";
  if (abs_pe && pos != "sinusoidal") label += "+abs-pe";
  return label;
}

}  // namespace agf::nn
