#include "train/decode.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "autograd/functions.h"
#include "data/bpe_model.h"
#include "ops/concat.h"
#include "ops/softmax.h"
#include "train/mixed_precision.h"

namespace agf::train {

namespace {

// Restores the model's training flag when decoding ends.
class EvaluationMode {
 public:
  explicit EvaluationMode(nn::Module& model) : model_(model), was_training_(model.training()) { model_.eval(); }
  ~EvaluationMode() { model_.train(was_training_); }

 private:
  nn::Module& model_;
  bool was_training_;
};

// [rows, columns] i64 ids, right-padded, on `device`.
Tensor ids_tensor(const std::vector<std::vector<int32_t>>& rows, int64_t columns, int32_t padding, Device device) {
  std::vector<int64_t> flat(rows.size() * static_cast<std::size_t>(columns), padding);
  for (std::size_t r = 0; r < rows.size(); ++r) std::copy(rows[r].begin(), rows[r].end(), flat.begin() + r * columns);
  return Tensor::from_vector(flat, {static_cast<int64_t>(rows.size()), columns}, DType::i64).to(device);
}

// Log-probabilities of the next token after each prefix: [rows, V] (f64 values for ranking).
std::vector<std::vector<double>> next_token_log_probs(nn::Transformer& model,
                                                      const std::vector<std::vector<int32_t>>& prefixes,
                                                      const Variable& memory, const Tensor& source_lengths,
                                                      nn::DropoutStream& dropout) {
  int64_t longest = 0;
  for (const auto& prefix : prefixes) longest = std::max<int64_t>(longest, static_cast<int64_t>(prefix.size()));
  const Variable hidden = model.decode(ids_tensor(prefixes, longest, data::pad_id, model.device()), memory,
                                       source_lengths, dropout);
  // Only each row's last real position matters: gather those rows, then project.
  std::vector<Variable> last;
  for (std::size_t r = 0; r < prefixes.size(); ++r) {
    last.push_back(slice(slice(hidden, 0, static_cast<int64_t>(r), static_cast<int64_t>(r) + 1), 1,
                         static_cast<int64_t>(prefixes[r].size()) - 1, static_cast<int64_t>(prefixes[r].size())));
  }
  const Variable logits = model.project(concat(last, 0));  // [rows, 1, V]
  // In f32 at least (half logits are widened) on the model's device; ranked on the host.
  const Tensor wide =
      logits.data().reshape({static_cast<int64_t>(prefixes.size()), -1}).to(accumulation_dtype(logits.dtype()));
  const Tensor log_probs = ops::log_softmax_forward(wide).to(Device::cpu());
  std::vector<std::vector<double>> result(prefixes.size());
  const std::vector<double> values = log_probs.to_double_vector();
  const std::size_t vocabulary = values.size() / prefixes.size();
  for (std::size_t r = 0; r < prefixes.size(); ++r) {
    result[r].assign(values.begin() + r * vocabulary, values.begin() + (r + 1) * vocabulary);
  }
  return result;
}

int64_t length_limit(const std::vector<int32_t>& source, const DecodeOptions& options) {
  return options.max_length_a * static_cast<int64_t>(source.size() + 1) + options.max_length_b;
}

// Rows `rows` of a [B, ...] tensor, as a new [rows.size(), ...] tensor.
Tensor gather_rows(const Tensor& tensor, const std::vector<std::size_t>& rows) {
  std::vector<Tensor> parts;
  for (std::size_t row : rows)
    parts.push_back(tensor.slice(0, static_cast<int64_t>(row), static_cast<int64_t>(row) + 1));
  return ops::concat(parts, 0);
}

// Greedy search of one batch of sources. Finished rows leave the batch, so the decoder only ever
// runs on sentences still being written.
std::vector<std::vector<int32_t>> greedy_batch(nn::Transformer& model, const std::vector<std::vector<int32_t>>& sources,
                                               const DecodeOptions& options, nn::DropoutStream& dropout) {
  std::vector<std::vector<int32_t>> encoder_rows;
  std::vector<int64_t> lengths;
  int64_t longest = 0;
  for (const auto& source : sources) {
    encoder_rows.push_back(source);
    encoder_rows.back().push_back(data::eos_id);
    lengths.push_back(static_cast<int64_t>(encoder_rows.back().size()));
    longest = std::max(longest, lengths.back());
  }
  const Device device = model.device();
  const Tensor all_lengths =
      Tensor::from_vector(lengths, {static_cast<int64_t>(sources.size())}, DType::i64).to(device);
  const Tensor all_memory =
      model.encode(ids_tensor(encoder_rows, longest, data::pad_id, device), all_lengths, dropout).data();
  std::vector<std::vector<int32_t>> prefixes(sources.size(), std::vector<int32_t>{data::bos_id});
  std::vector<std::size_t> active(sources.size());
  std::iota(active.begin(), active.end(), 0);
  while (!active.empty()) {
    const bool everyone = active.size() == sources.size();
    const Variable memory(everyone ? all_memory : gather_rows(all_memory, active));
    const Tensor source_lengths = everyone ? all_lengths : gather_rows(all_lengths, active);
    std::vector<std::vector<int32_t>> active_prefixes;
    for (std::size_t row : active) active_prefixes.push_back(prefixes[row]);
    const auto log_probs = next_token_log_probs(model, active_prefixes, memory, source_lengths, dropout);
    std::vector<std::size_t> still_active;
    for (std::size_t i = 0; i < active.size(); ++i) {
      const std::size_t row = active[i];
      const auto& scores = log_probs[i];
      const int32_t best = static_cast<int32_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
      prefixes[row].push_back(best);
      const bool done = best == data::eos_id ||
                        static_cast<int64_t>(prefixes[row].size()) > length_limit(sources[row], options);
      if (!done) still_active.push_back(row);
    }
    active = std::move(still_active);
  }
  std::vector<std::vector<int32_t>> outputs;
  for (auto& prefix : prefixes) {
    std::vector<int32_t> tokens(prefix.begin() + 1, prefix.end());
    if (!tokens.empty() && tokens.back() == data::eos_id) tokens.pop_back();
    outputs.push_back(std::move(tokens));
  }
  return outputs;
}

// Greedy search in batches of sentences of similar length (less padding, fewer wasted steps).
std::vector<std::vector<int32_t>> greedy(nn::Transformer& model, const std::vector<std::vector<int32_t>>& sources,
                                         const DecodeOptions& options, nn::DropoutStream& dropout) {
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() < sources[b].size(); });
  std::vector<std::vector<int32_t>> outputs(sources.size());
  for (std::size_t start = 0; start < order.size(); start += options.batch_sentences) {
    const std::size_t end = std::min(order.size(), start + options.batch_sentences);
    std::vector<std::vector<int32_t>> batch;
    for (std::size_t i = start; i < end; ++i) batch.push_back(sources[order[i]]);
    auto translated = greedy_batch(model, batch, options, dropout);
    for (std::size_t i = start; i < end; ++i) outputs[order[i]] = std::move(translated[i - start]);
  }
  return outputs;
}

std::vector<int32_t> beam_search(nn::Transformer& model, const std::vector<int32_t>& source,
                                 const DecodeOptions& options, nn::DropoutStream& dropout) {
  struct Hypothesis {
    std::vector<int32_t> tokens;  // starts with bos
    double log_prob = 0;
  };
  auto normalized = [&](const Hypothesis& h) {
    const double length = static_cast<double>(h.tokens.size() - 1);  // generated tokens, eos included
    return h.log_prob / std::pow(std::max(length, 1.0), options.length_penalty);
  };
  std::vector<int32_t> encoder_row = source;
  encoder_row.push_back(data::eos_id);
  const int64_t source_length = static_cast<int64_t>(encoder_row.size());
  const Device device = model.device();
  const Variable single_memory = model.encode(
      ids_tensor({encoder_row}, source_length, data::pad_id, device),
      Tensor::from_vector(std::vector<int64_t>{source_length}, {1}, DType::i64).to(device), dropout);
  std::vector<Hypothesis> alive{{{data::bos_id}, 0.0}}, finished;
  const int64_t limit = length_limit(source, options);
  for (int64_t step = 0; step < limit && !alive.empty(); ++step) {
    const auto rows = static_cast<int64_t>(alive.size());
    const Variable memory = contiguous(expand(single_memory, {rows, source_length, single_memory.size(2)}));
    const Tensor lengths = Tensor::full({rows}, static_cast<double>(source_length), DType::i64).to(device);
    std::vector<std::vector<int32_t>> prefixes;
    for (const auto& h : alive) prefixes.push_back(h.tokens);
    const auto log_probs = next_token_log_probs(model, prefixes, memory, lengths, dropout);
    // Candidates: the best `beam` continuations of each hypothesis, ranked together by log-probability.
    std::vector<Hypothesis> candidates;
    for (std::size_t r = 0; r < alive.size(); ++r) {
      std::vector<int32_t> order(log_probs[r].size());
      std::iota(order.begin(), order.end(), 0);
      const int width = std::min<int>(options.beam, static_cast<int>(order.size()));
      std::partial_sort(order.begin(), order.begin() + width, order.end(),
                        [&](int32_t a, int32_t b) { return log_probs[r][a] > log_probs[r][b]; });
      for (int i = 0; i < width; ++i) {
        Hypothesis next = alive[r];
        next.tokens.push_back(order[i]);
        next.log_prob += log_probs[r][order[i]];
        candidates.push_back(std::move(next));
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.log_prob > b.log_prob; });
    // The best `beam` unfinished candidates stay alive; candidates ending (eos, or the length limit) are
    // finished when they rank among the best `beam`.
    alive.clear();
    for (std::size_t i = 0; i < candidates.size() && static_cast<int>(alive.size()) < options.beam; ++i) {
      const bool ended = candidates[i].tokens.back() == data::eos_id || step + 1 == limit;
      if (!ended) {
        alive.push_back(std::move(candidates[i]));
      } else if (static_cast<int>(i) < options.beam) {
        finished.push_back(std::move(candidates[i]));
      }
    }
    // Stop once `beam` hypotheses have finished and no alive one can still beat the best of them: an alive
    // hypothesis can at best keep its log-probability and reach the length limit.
    if (static_cast<int>(finished.size()) >= options.beam) {
      double best_finished = -std::numeric_limits<double>::infinity(),
             best_possible = -std::numeric_limits<double>::infinity();
      for (const auto& h : finished) best_finished = std::max(best_finished, normalized(h));
      for (const auto& h : alive) {
        best_possible = std::max(best_possible,
                                 h.log_prob / std::pow(static_cast<double>(limit), options.length_penalty));
      }
      if (best_finished >= best_possible) break;
    }
  }
  const std::vector<Hypothesis>& pool = finished.empty() ? alive : finished;
  const auto best = std::max_element(pool.begin(), pool.end(), [&](const Hypothesis& a, const Hypothesis& b) {
    return normalized(a) < normalized(b);
  });
  std::vector<int32_t> tokens(best->tokens.begin() + 1, best->tokens.end());
  if (!tokens.empty() && tokens.back() == data::eos_id) tokens.pop_back();
  return tokens;
}

}  // namespace

std::vector<std::vector<int32_t>> translate(nn::Transformer& model, const std::vector<std::vector<int32_t>>& sources,
                                            const DecodeOptions& options) {
  AGF_CHECK(options.beam >= 1 && options.beam <= max_beam, "translate: beam size must be from 1 to {}, got {}",
            max_beam, options.beam);
  if (sources.empty()) return {};
  EvaluationMode evaluation(model);
  NoGradGuard no_grad;
  nn::DropoutStream dropout;  // unused in evaluation mode
  if (options.beam == 1) return greedy(model, sources, options, dropout);
  std::vector<std::vector<int32_t>> outputs;
  for (const auto& source : sources) outputs.push_back(beam_search(model, source, options, dropout));
  return outputs;
}

}  // namespace agf::train
