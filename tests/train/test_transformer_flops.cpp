// The MFU numerator: training FLOPs of a step, checked against a count made by hand for a tiny model.
#include <catch2/catch.hpp>

#include "nn/transformer_flops.h"

TEST_CASE("training FLOPs count every matrix product of the step three times", "[bench]") {
  agf::nn::TransformerConfig config = agf::nn::TransformerConfig::from_preset("tiny");  // d 32, f 64, 1+1 layers
  config.vocabulary_size = 100;
  const int64_t B = 2, S = 5, T = 7;
  // By hand, forward multiply-adds for the whole batch:
  const double encoder = B * S * (4 * 32 * 32 + 2 * 32 * 64 + 2 * S * 32);
  const double decoder = B * T * (6 * 32 * 32 + 2 * 32 * 64 + 2 * T * 32 + 2 * S * 32) + B * S * (2 * 32 * 32);
  const double output = B * T * 32 * 100;
  CHECK(agf::nn::training_step_flops(config, B, S, T) == Approx(3 * 2 * (encoder + decoder + output)));
  // Twice the layers, twice the layer work.
  agf::nn::TransformerConfig deeper = config;
  deeper.encoder_layers = 2, deeper.decoder_layers = 2;
  CHECK(agf::nn::training_step_flops(deeper, B, S, T) == Approx(3 * 2 * (2 * encoder + 2 * decoder + output)));
}
