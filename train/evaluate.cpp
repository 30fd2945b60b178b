#include "train/evaluate.h"

#include <cmath>

#include "autograd/functions.h"
#include "data/batch_sampler.h"
#include "data/bpe_model.h"
#include "ops/softmax.h"
#include "train/batch.h"
#include "train/mixed_precision.h"

namespace agf::train {

EvaluationResult evaluate(nn::Transformer& model, const data::TokenDataset& dataset, const data::BpeCodec& codec,
                          const EvaluationOptions& options) {
  AGF_CHECK(dataset.size() > 0, "evaluate: {} holds no pairs: there is nothing to evaluate", dataset.path());
  const bool was_training = model.training();
  model.eval();
  EvaluationResult result;
  {
    NoGradGuard no_grad;
    nn::DropoutStream dropout;
    data::BatchSampler sampler = data::BatchSampler::for_dataset(
        dataset, {.max_tokens = options.max_tokens, .seed = 0, .shuffle = false});
    double smoothed_sum = 0, nll_sum = 0;
    int64_t correct = 0;
    if (options.per_sentence) {
      result.sentences.resize(dataset.size());
      for (std::size_t i = 0; i < dataset.size(); ++i) {
        result.sentences[i].index = static_cast<int64_t>(i);
        result.sentences[i].source_tokens = static_cast<int64_t>(dataset.source(i).size());
      }
    }
    const double eps = options.label_smoothing;
    for (const auto& indexes : sampler.epoch_batches(0)) {
      const Batch batch = make_batch(dataset, indexes);  // on the CPU: the targets are read here
      const Batch on_device = batch.to(model.device());
      const Variable logits = model.forward(on_device.encoder_input, on_device.source_lengths, on_device.decoder_input,
                                            dropout);
      const int64_t vocabulary = logits.size(-1);
      // Log-softmax on the model's device, in f32 at least (half logits are widened first), then to the host.
      const Tensor wide = logits.data().reshape({-1, vocabulary}).to(accumulation_dtype(logits.dtype()));
      const Tensor log_probs = ops::log_softmax_forward(wide).to(Device::cpu()).to(DType::f64);
      const double* lp = log_probs.data<double>();
      const std::vector<int64_t> targets = batch.decoder_target.to_int_vector();
      const std::size_t row_length = static_cast<std::size_t>(batch.decoder_target.size(1));
      for (std::size_t position = 0; position < targets.size(); ++position) {
        const int64_t y = targets[position];
        if (y == data::pad_id) continue;
        const double* row = lp + static_cast<int64_t>(position) * vocabulary;
        double row_sum = 0;
        int64_t best = 0;
        for (int64_t v = 0; v < vocabulary; ++v) {
          row_sum += row[v];
          if (row[v] > row[best]) best = v;
        }
        nll_sum += -row[y];
        smoothed_sum += (1 - eps) * -row[y] + eps * -row_sum / static_cast<double>(vocabulary);
        correct += best == y;
        ++result.target_tokens;
        if (options.per_sentence) {
          SentenceScore& sentence = result.sentences[indexes[position / row_length]];
          sentence.nll += -row[y];
          sentence.correct += best == y;
          ++sentence.target_tokens;
        }
      }
    }
    const double tokens = static_cast<double>(std::max<int64_t>(result.target_tokens, 1));
    result.loss = smoothed_sum / tokens;
    result.nll = nll_sum / tokens;
    result.perplexity = std::exp(result.nll);
    result.token_accuracy = 100.0 * static_cast<double>(correct) / tokens;
  }
  if (options.bleu_sentences > 0) {
    const std::size_t count = std::min<std::size_t>(static_cast<std::size_t>(options.bleu_sentences), dataset.size());
    std::vector<std::vector<int32_t>> sources;
    std::vector<std::string> references;
    for (std::size_t i = 0; i < count; ++i) {
      sources.emplace_back(dataset.source(i).begin(), dataset.source(i).end());
      references.push_back(codec.decode(dataset.target(i)));
    }
    std::vector<std::string> hypotheses;
    for (const auto& ids : translate(model, sources, options.decode)) hypotheses.push_back(codec.decode(ids));
    result.bleu = corpus_bleu(hypotheses, {references});
    result.bleu_sentences = static_cast<int64_t>(count);
    if (options.per_sentence) {
      for (std::size_t i = 0; i < count; ++i) {
        SentenceScore& sentence = result.sentences[i];
        sentence.translated = true;
        sentence.bleu = sentence_bleu_statistics(hypotheses[i], {references[i]});
        sentence.hypothesis = std::move(hypotheses[i]);
        sentence.reference = std::move(references[i]);
      }
    }
  }
  model.train(was_training);
  return result;
}

}  // namespace agf::train
