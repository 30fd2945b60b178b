// Build, train and save a small Transformer translator with agf as a library, in one file: a BPE learned
// from eight sentence pairs, the model, Adam, the training loop, a checkpoint, and the checkpoint loaded
// back to translate. The checkpoint is the same kind `agf train` writes: `agf translate --checkpoint` reads it.
//
//   tiny_translate [CHECKPOINT] [STEPS]      (defaults: tiny_translate.safetensors, 60)
//
// Exits 1 when a loss is not finite or the last loss is not below the first.
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_codec.h"
#include "data/bpe_learn.h"
#include "nn/transformer.h"
#include "train/adam.h"
#include "train/batch.h"
#include "train/checkpoint.h"
#include "train/decode.h"
#include "train/sequence_loss.h"

int main(int argc, char** argv) {
  const std::string checkpoint = argc > 1 ? argv[1] : "tiny_translate.safetensors";
  const int steps = argc > 2 ? std::stoi(argv[2]) : 60;

  // ---- data: English -> German, tokenized with a joint BPE learned from both sides ----
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"the house is small", "das Haus ist klein"}, {"the house is big", "das Haus ist groß"},
      {"the cat is small", "die Katze ist klein"},  {"the dog is big", "der Hund ist groß"},
      {"the cat sleeps", "die Katze schläft"},      {"the dog sleeps", "der Hund schläft"},
      {"the house is old", "das Haus ist alt"},     {"the dog is old", "der Hund ist alt"},
  };
  std::vector<std::string_view> all_lines;
  for (const auto& [english, german] : pairs) all_lines.insert(all_lines.end(), {english, german});
  // 260 fixed ids (specials, byte fallback), the alphabet, then merges until 320 tokens.
  const agf::data::BpeModel bpe = agf::data::learn_bpe(all_lines, {.vocab_size = 320, .min_frequency = 2});
  const agf::data::BpeCodec codec(bpe);
  std::vector<std::vector<int32_t>> sources, targets;
  for (const auto& [english, german] : pairs) {
    sources.push_back(codec.encode(english));
    targets.push_back(codec.encode(german));
  }
  // One batch of all pairs: ids [8, T] with eos/bos added and padding (train/batch.h).
  const agf::train::Batch batch = agf::train::make_batch(sources, targets);

  // ---- model: the "tiny" preset (d_model 32, 1 + 1 layers) with AGF positions on keys and values ----
  agf::nn::TransformerConfig config = agf::nn::TransformerConfig::from_preset("tiny");
  config.vocabulary_size = static_cast<int64_t>(bpe.vocab_size());
  config.pos = "agf-m";
  config.pcmv = true;
  config.validate();
  agf::nn::Transformer model(config, /*seed=*/1);
  agf::train::Adam optimizer(model.named_parameters());
  agf::nn::DropoutStream dropout(/*seed=*/1);  // the tiny preset has no dropout; the model still takes a stream
  std::printf("%lld parameters, vocabulary %zu, %d steps\n", static_cast<long long>(model.parameter_count()),
              bpe.vocab_size(), steps);

  // ---- training: forward, label-smoothed cross-entropy, backward, Adam ----
  double first_loss = NAN, last_loss = NAN;
  for (int step = 1; step <= steps; ++step) {
    const agf::Variable logits = model.forward(batch.encoder_input, batch.source_lengths, batch.decoder_input, dropout);
    const agf::Variable loss = agf::train::sequence_loss(logits, batch.decoder_target, /*label_smoothing=*/0.1);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step(/*lr=*/3e-3);
    last_loss = loss.item();
    if (step == 1) first_loss = last_loss;
    if (step == 1 || step % 10 == 0 || step == steps) std::printf("step %3d  loss %.4f\n", step, last_loss);
    if (!std::isfinite(last_loss)) {
      std::fprintf(stderr, "tiny_translate: the loss is %f at step %d\n", last_loss, step);
      return 1;
    }
  }
  if (!(last_loss < first_loss)) {
    std::fprintf(stderr, "tiny_translate: the loss did not decrease (%.4f -> %.4f)\n", first_loss, last_loss);
    return 1;
  }

  // ---- save: parameters under PyTorch's names, the config and the BPE model in the metadata ----
  agf::train::save_checkpoint(checkpoint, model, config, bpe.to_json(), /*optimizer=*/nullptr, /*state=*/nullptr);
  std::printf("saved %s\n", checkpoint.c_str());

  // ---- load it back, as `agf translate` would, and translate with greedy search ----
  agf::train::LoadedModel loaded = agf::train::load_model(checkpoint);
  const agf::data::BpeCodec loaded_codec(loaded.bpe);
  for (const std::string sentence : {"the house is small", "the cat sleeps"}) {
    const auto translation = agf::train::translate(*loaded.model, {loaded_codec.encode(sentence)});
    std::printf("%s -> %s\n", sentence.c_str(), loaded_codec.decode(translation.front()).c_str());
  }
  return 0;
}
