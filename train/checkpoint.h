#pragma once
// Checkpoints: one safetensors file with the model parameters under their SPEC §7 names, optionally the
// optimizer moments ("optimizer.exp_avg.<name>", "optimizer.exp_avg_sq.<name>"), and in the metadata
// the model config ("agf.config.*"), the BPE model ("agf.bpe") and the training state ("agf.state.*":
// step, data position, dropout stream offset, ...). A checkpoint alone rebuilds and resumes a run.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nn/module.h"
#include "nn/transformer_config.h"
#include "train/adam.h"
#include "train/loss_scaler.h"
#include "train/safetensors.h"

namespace agf::train {

struct TrainingState {
  int64_t step = 0;                               // optimizer updates done
  uint64_t epoch = 0, batch = 0;                  // data position: the next batch to draw
  uint64_t dropout_seed = 0, dropout_offset = 0;  // the offset of rank 0's stream (the only one in a world of one)
  // A distributed run (docs/distributed.md): the number of processes that trained it, and each one's dropout
  // stream offset (rank r's stream has the seed dropout_stream_seed(dropout_seed, r)). Checkpoints of a
  // single process, older ones included, have a world of 1 and no list.
  int64_t world_size = 1;
  std::vector<uint64_t> dropout_offsets;
  double best_valid_accuracy = -1;
  // Early stopping (TrainOptions::patience): the lowest validation loss so far (none before the first
  // validation) and how many validations since have not gone below it. Older checkpoints have neither.
  std::optional<double> best_valid_loss;
  int64_t validations_since_best = 0;
  int64_t target_tokens = 0;                   // seen so far
  double elapsed_seconds = 0;                  // training time so far (not counting validation)
  std::string precision = "fp32";              // --precision of the run (checkpoints hold f32 weights at any)
  std::optional<LossScalerState> loss_scaler;  // absent in checkpoints written before mixed precision

  std::map<std::string, std::string> to_metadata() const;
  static TrainingState from_metadata(const std::map<std::string, std::string>& metadata);
};

struct Checkpoint {
  SafetensorsFile file;
  nn::TransformerConfig config;
  std::string bpe_json;                // empty when the checkpoint carries none
  std::optional<TrainingState> state;  // present in training checkpoints
};

// Writes atomically (see save_safetensors). `optimizer` and `state` may be null (a model-only file).
void save_checkpoint(const std::string& path, const nn::Module& model, const nn::TransformerConfig& config,
                     const std::string& bpe_json, const Adam* optimizer, const TrainingState* state);
// The same with the weights given by name: under mixed precision the f32 masters, not the model's
// half-precision compute copies. Tensors on another device are copied to the CPU first.
void save_checkpoint(const std::string& path, const std::vector<std::pair<std::string, Variable>>& parameters,
                     const nn::TransformerConfig& config, const std::string& bpe_json, const Adam* optimizer,
                     const TrainingState* state);

Checkpoint load_checkpoint(const std::string& path);
// The same from the file's bytes (rank 0 sends them to the other processes of a distributed run).
Checkpoint load_checkpoint_bytes(const std::string& bytes, const std::string& path);

// Refuses a checkpoint whose tensors hold fewer values than its config has weights (a lower bound of them),
// before a model is allocated from that config: a config of a billion weights in a file of a few kilobytes
// would allocate gigabytes only to find the tensors missing.
void check_weights_present(const Checkpoint& checkpoint, const std::string& path);

// Copies the checkpoint's tensors into the model's parameters. Every parameter must be present with its
// shape (converted to the parameter's dtype); tensors that are neither parameters nor optimizer state
// are an error, so a checkpoint of another scheme is never half-loaded.
void load_parameters(nn::Module& model, const Checkpoint& checkpoint, const std::string& path);

// The optimizer moments stored in the checkpoint, renamed as Adam::state() names them.
std::vector<std::pair<std::string, Tensor>> optimizer_state(const Checkpoint& checkpoint);

}  // namespace agf::train

#include <memory>

#include "data/bpe_model.h"
#include "nn/transformer.h"

namespace agf::train {

// A model ready to use: rebuilt from a checkpoint's config, its parameters loaded, and its BPE model.
struct LoadedModel {
  Checkpoint checkpoint;
  std::unique_ptr<nn::Transformer> model;
  data::BpeModel bpe;  // empty (vocab_size() == 0) when the checkpoint carries none
};

// `dtype`: the parameters' dtype in memory (checkpoint values are converted).
LoadedModel load_model(const std::string& path, DType dtype = DType::f32);

}  // namespace agf::train
