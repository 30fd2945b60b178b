#pragma once
// The hyperparameters of agf's encoder–decoder Transformer (SPEC §6), its presets, and their round trip
// through a checkpoint's metadata (SPEC §7: a checkpoint alone is enough to rebuild the model).
#include <cstdint>
#include <map>
#include <string>

namespace agf::nn {

struct TransformerConfig {
  std::string preset = "cpu-small";
  int64_t d_model = 256;
  int64_t heads = 4;
  int64_t ffn = 1024;
  int64_t encoder_layers = 3;
  int64_t decoder_layers = 3;
  double dropout = 0.1;         // embeddings, after each sublayer, and on attention weights
  bool pre_norm = false;        // post-norm (the original Transformer) by default
  int64_t vocabulary_size = 0;  // from the BPE model

  // Position: `pos` is a scheme of SPEC §5 ("sinusoidal", "none", "rope", "alibi", "alibi-mult", "t5",
  // "kerple-log", "kerple-power", "agf-b", "agf-m", "agf-f"); `pcmv` applies a coefficient scheme to the
  // values too; `abs_pe` adds the sinusoidal embedding on top of any scheme.
  std::string pos = "agf-m";
  bool pcmv = true;
  bool abs_pe = false;
  int64_t max_distance = 256;  // L
  double k = 2.0;              // the LC1 exponent
  bool learnable_k = false;

  // Sinusoidal embeddings are added when pos == "sinusoidal" or abs_pe.
  bool uses_sinusoidal() const { return pos == "sinusoidal" || abs_pe; }
  int64_t head_dim() const { return d_model / heads; }

  // A preset of SPEC §6: "paper-big", "base", "cpu-small" or "cpu-mini" (others: an error listing them).
  static TransformerConfig from_preset(const std::string& name);
  // Checks every field (positive sizes, d_model divisible by heads, a known scheme, pcmv only with a
  // coefficient scheme); throws agf::Error naming the field.
  void validate() const;
  // The weights of the embeddings, the layers and agf's positional tables (lc2, lc3), biases and norms left
  // out: a lower bound of the parameters the config allocates.
  double approximate_parameters() const;

  // "agf.config.*" keys, values as text.
  std::map<std::string, std::string> to_metadata() const;
  static TransformerConfig from_metadata(const std::map<std::string, std::string>& metadata);
  // A short human-readable name, e.g. "agf-m+pcmv" or "sinusoidal".
  std::string scheme_label() const;
};

}  // namespace agf::nn
