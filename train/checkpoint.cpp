#include "train/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/number_text.h"

namespace agf::train {

namespace {
constexpr const char* kOptimizerPrefix = "optimizer.";

const std::string& metadata_text(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const auto found = metadata.find(key);
  AGF_CHECK(found != metadata.end(), "checkpoint metadata lacks '{}'", key);
  return found->second;
}

uint64_t metadata_unsigned(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const std::string& text = metadata_text(metadata, key);
  const std::optional<uint64_t> value = parse_number<uint64_t>(text);
  AGF_CHECK(value.has_value(), "checkpoint metadata '{}' is not a whole number >= 0: '{}'", key, text);
  return *value;
}

// A count (steps, tokens) kept as int64_t.
int64_t metadata_count(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const std::string& text = metadata_text(metadata, key);
  const std::optional<int64_t> value = parse_number<int64_t>(text);
  AGF_CHECK(value.has_value() && *value >= 0, "checkpoint metadata '{}' is not a whole number >= 0: '{}'", key, text);
  return *value;
}

double metadata_real(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const std::string& text = metadata_text(metadata, key);
  const std::optional<double> value = parse_number<double>(text);
  AGF_CHECK(value.has_value() && std::isfinite(*value), "checkpoint metadata '{}' is not a finite number: '{}'", key,
            text);
  return *value;
}
}  // namespace

std::map<std::string, std::string> TrainingState::to_metadata() const {
  std::map<std::string, std::string> metadata{{"agf.state.step", std::to_string(step)},
                                              {"agf.state.epoch", std::to_string(epoch)},
                                              {"agf.state.batch", std::to_string(batch)},
                                              {"agf.state.dropout_seed", std::to_string(dropout_seed)},
                                              {"agf.state.dropout_offset", std::to_string(dropout_offset)},
                                              {"agf.state.best_valid_accuracy",
                                               fmt::format("{:.17g}", best_valid_accuracy)},
                                              {"agf.state.target_tokens", std::to_string(target_tokens)},
                                              {"agf.state.elapsed_seconds", fmt::format("{:.17g}", elapsed_seconds)}};
  if (best_valid_loss) metadata["agf.state.best_valid_loss"] = fmt::format("{:.17g}", *best_valid_loss);
  metadata["agf.state.validations_since_best"] = std::to_string(validations_since_best);
  metadata["agf.state.precision"] = precision;
  metadata["agf.state.world_size"] = std::to_string(world_size);
  if (world_size > 1) {
    AGF_CHECK(dropout_offsets.size() == static_cast<std::size_t>(world_size),
              "checkpoint: {} dropout stream offsets for a world of {} processes", dropout_offsets.size(), world_size);
    metadata["agf.state.dropout_offsets"] = fmt::format("{}", fmt::join(dropout_offsets, ","));
  }
  if (loss_scaler) {
    metadata["agf.state.loss_scale"] = fmt::format("{:.17g}", loss_scaler->scale);
    metadata["agf.state.loss_scale_good_steps"] = std::to_string(loss_scaler->good_steps);
    metadata["agf.state.skipped_steps"] = std::to_string(loss_scaler->skipped_steps);
  }
  return metadata;
}

TrainingState TrainingState::from_metadata(const std::map<std::string, std::string>& metadata) {
  TrainingState state;
  state.step = metadata_count(metadata, "agf.state.step");
  state.epoch = metadata_unsigned(metadata, "agf.state.epoch");
  state.batch = metadata_unsigned(metadata, "agf.state.batch");
  state.dropout_seed = metadata_unsigned(metadata, "agf.state.dropout_seed");
  state.dropout_offset = metadata_unsigned(metadata, "agf.state.dropout_offset");
  state.best_valid_accuracy = metadata_real(metadata, "agf.state.best_valid_accuracy");
  state.target_tokens = metadata_count(metadata, "agf.state.target_tokens");
  state.elapsed_seconds = metadata_real(metadata, "agf.state.elapsed_seconds");
  // Written since early stopping: older checkpoints start its count afresh.
  if (metadata.count("agf.state.best_valid_loss")) {
    state.best_valid_loss = metadata_real(metadata, "agf.state.best_valid_loss");
  }
  if (metadata.count("agf.state.validations_since_best")) {
    state.validations_since_best = metadata_count(metadata, "agf.state.validations_since_best");
  }
  // Written since distributed training: older checkpoints are of a single process.
  if (metadata.count("agf.state.world_size")) {
    state.world_size = metadata_count(metadata, "agf.state.world_size");
    AGF_CHECK(state.world_size >= 1, "checkpoint metadata 'agf.state.world_size' must be at least 1, got {}",
              state.world_size);
  }
  if (state.world_size > 1) {
    const std::string& text = metadata_text(metadata, "agf.state.dropout_offsets");
    for (std::size_t start = 0; start <= text.size();) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      const std::optional<uint64_t> offset = parse_number<uint64_t>(text.substr(start, comma - start));
      AGF_CHECK(offset.has_value(),
                "checkpoint metadata 'agf.state.dropout_offsets' is not a list of whole numbers: '{}'", text);
      state.dropout_offsets.push_back(*offset);
      start = comma + 1;
    }
    AGF_CHECK(state.dropout_offsets.size() == static_cast<std::size_t>(state.world_size),
              "checkpoint metadata 'agf.state.dropout_offsets' holds {} offsets for a world of {} processes",
              state.dropout_offsets.size(), state.world_size);
  }
  // Written since mixed precision: older checkpoints are fp32 runs without a scaler state.
  if (const auto found = metadata.find("agf.state.precision"); found != metadata.end()) state.precision = found->second;
  if (metadata.count("agf.state.loss_scale")) {
    LossScalerState scaler;
    scaler.scale = metadata_real(metadata, "agf.state.loss_scale");
    AGF_CHECK(scaler.scale > 0, "checkpoint metadata 'agf.state.loss_scale' must be positive, got {}", scaler.scale);
    scaler.good_steps = metadata_count(metadata, "agf.state.loss_scale_good_steps");
    scaler.skipped_steps = metadata_count(metadata, "agf.state.skipped_steps");
    state.loss_scaler = scaler;
  }
  return state;
}

void save_checkpoint(const std::string& path, const nn::Module& model, const nn::TransformerConfig& config,
                     const std::string& bpe_json, const Adam* optimizer, const TrainingState* state) {
  save_checkpoint(path, model.named_parameters(), config, bpe_json, optimizer, state);
}

void save_checkpoint(const std::string& path, const std::vector<std::pair<std::string, Variable>>& parameters,
                     const nn::TransformerConfig& config, const std::string& bpe_json, const Adam* optimizer,
                     const TrainingState* state) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, parameter] : parameters) tensors.emplace_back(name, parameter.data().to(Device::cpu()));
  if (optimizer) {
    for (const auto& [name, moment] : optimizer->state()) {
      tensors.emplace_back(kOptimizerPrefix + name, moment.to(Device::cpu()));
    }
  }
  std::map<std::string, std::string> metadata = config.to_metadata();
  metadata["format"] = "pt";  // what the safetensors library expects of PyTorch-loadable files
  if (!bpe_json.empty()) metadata["agf.bpe"] = bpe_json;
  if (state) metadata.merge(state->to_metadata());
  save_safetensors(path, tensors, metadata);
}

namespace {
Checkpoint checkpoint_of(SafetensorsFile file, const std::string& path) {
  Checkpoint checkpoint;
  checkpoint.file = std::move(file);
  const auto& metadata = checkpoint.file.metadata;
  try {
    checkpoint.config = nn::TransformerConfig::from_metadata(metadata);
    if (metadata.count("agf.state.step")) checkpoint.state = TrainingState::from_metadata(metadata);
  } catch (const Error& error) {
    fail("{}: {}", path, error.what());
  }
  if (const auto found = metadata.find("agf.bpe"); found != metadata.end()) checkpoint.bpe_json = found->second;
  return checkpoint;
}
}  // namespace

Checkpoint load_checkpoint(const std::string& path) { return checkpoint_of(load_safetensors(path), path); }

Checkpoint load_checkpoint_bytes(const std::string& bytes, const std::string& path) {
  return checkpoint_of(load_safetensors_bytes(bytes, path), path);
}

void check_weights_present(const Checkpoint& checkpoint, const std::string& path) {
  double values_in_file = 0;
  for (const auto& [name, tensor] : checkpoint.file.tensors) values_in_file += static_cast<double>(tensor.numel());
  const auto& config = checkpoint.config;
  AGF_CHECK(config.approximate_parameters() <= values_in_file,
            "{}: its config ({} {}, d_model {}, vocabulary {}) has "
            "about {:.3g} weights but the file holds {:.0f} values (edited, or not a checkpoint of this model)",
            path, config.preset, config.scheme_label(), config.d_model, config.vocabulary_size,
            config.approximate_parameters(), values_in_file);
}

void load_parameters(nn::Module& model, const Checkpoint& checkpoint, const std::string& path) {
  std::set<std::string> expected;
  for (const auto& [name, parameter] : model.named_parameters()) {
    expected.insert(name);
    const Tensor* saved = checkpoint.file.find(name);
    AGF_CHECK(saved != nullptr, "{}: the checkpoint has no tensor '{}' that this model needs", path, name);
    AGF_CHECK(saved->shape() == parameter.shape(), "{}: tensor '{}' is {} but the model's parameter is {}", path, name,
              saved->description(), parameter.data().description());
    // Weights that are nan or inf make every output nan: refused here rather than reported as a loss of nan.
    const std::vector<double> values = saved->to_double_vector();
    const auto non_finite = std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
    AGF_CHECK(non_finite == values.end(),
              "{}: tensor '{}' holds {} at element {}: the weights are not finite (a run that diverged?)", path, name,
              *non_finite, non_finite - values.begin());
    Tensor destination = parameter.data();
    destination.copy_from(*saved);
  }
  for (const auto& [name, tensor] : checkpoint.file.tensors) {
    AGF_CHECK(expected.count(name) || name.rfind(kOptimizerPrefix, 0) == 0,
              "{}: tensor '{}' is not a parameter of this model ({} {})", path, name, checkpoint.config.preset,
              checkpoint.config.scheme_label());
  }
}

std::vector<std::pair<std::string, Tensor>> optimizer_state(const Checkpoint& checkpoint) {
  std::vector<std::pair<std::string, Tensor>> state;
  const std::string prefix = kOptimizerPrefix;
  for (const auto& [name, tensor] : checkpoint.file.tensors) {
    if (name.rfind(prefix, 0) == 0) state.emplace_back(name.substr(prefix.size()), tensor);
  }
  return state;
}

}  // namespace agf::train

namespace agf::train {

LoadedModel load_model(const std::string& path, DType dtype) {
  LoadedModel loaded;
  loaded.checkpoint = load_checkpoint(path);
  check_weights_present(loaded.checkpoint, path);
  loaded.model = std::make_unique<nn::Transformer>(loaded.checkpoint.config, 0, dtype);
  load_parameters(*loaded.model, loaded.checkpoint, path);
  if (!loaded.checkpoint.bpe_json.empty()) {
    loaded.bpe = data::BpeModel::from_json(loaded.checkpoint.bpe_json, path + " (agf.bpe)");
  }
  return loaded;
}

}  // namespace agf::train
