#include "train/sentence_scores.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/text_file.h"

namespace agf::train {

void write_sentence_scores(const std::string& path, const std::vector<SentenceScore>& sentences) {
  std::string text;
  for (const SentenceScore& s : sentences) {
    nlohmann::json line{{"index", s.index},
                        {"source_tokens", s.source_tokens},
                        {"target_tokens", s.target_tokens},
                        {"correct", s.correct},
                        {"nll", s.nll}};
    if (s.translated) {
      line["hypothesis"] = s.hypothesis;
      line["reference"] = s.reference;
      line["bleu"] = {{"matches", s.bleu.matches},
                      {"totals", s.bleu.totals},
                      {"hyp_len", s.bleu.hypothesis_length},
                      {"ref_len", s.bleu.reference_length}};
    }
    text += line.dump() + "\n";
  }
  data::write_file(path, text);
}

std::vector<SentenceScore> read_sentence_scores(const std::string& path) {
  std::vector<SentenceScore> sentences;
  const std::vector<std::string> lines = data::read_lines(path);
  for (std::size_t number = 1; number <= lines.size(); ++number) {
    const std::string& text = lines[number - 1];
    if (text.empty()) continue;
    const auto line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    AGF_CHECK(line.is_object(), "{}:{}: not a JSON object", path, number);
    SentenceScore s;
    try {
      s.index = line.at("index").get<int64_t>();
      s.source_tokens = line.at("source_tokens").get<int64_t>();
      s.target_tokens = line.at("target_tokens").get<int64_t>();
      s.correct = line.at("correct").get<int64_t>();
      s.nll = line.at("nll").get<double>();
      if (line.contains("hypothesis")) {
        s.translated = true;
        s.hypothesis = line.at("hypothesis").get<std::string>();
        s.reference = line.at("reference").get<std::string>();
        const auto& bleu = line.at("bleu");
        for (int n = 0; n < 4; ++n) {
          s.bleu.matches[n] = bleu.at("matches").at(n).get<int64_t>();
          s.bleu.totals[n] = bleu.at("totals").at(n).get<int64_t>();
        }
        s.bleu.hypothesis_length = bleu.at("hyp_len").get<int64_t>();
        s.bleu.reference_length = bleu.at("ref_len").get<int64_t>();
      }
    } catch (const nlohmann::json::exception& error) {
      fail("{}:{}: {}", path, number, error.what());
    }
    AGF_CHECK(s.index >= 0 && s.source_tokens >= 0 && s.target_tokens >= 1 && s.correct >= 0 &&
                  s.correct <= s.target_tokens,
              "{}:{}: counts out of range (index {}, source_tokens {}, target_tokens {}, correct {})", path, number,
              s.index, s.source_tokens, s.target_tokens, s.correct);
    sentences.push_back(std::move(s));
  }
  AGF_CHECK(!sentences.empty(), "{}: no sentences", path);
  return sentences;
}

double LengthBucket::token_accuracy() const {
  return target_tokens > 0 ? 100.0 * static_cast<double>(correct) / static_cast<double>(target_tokens) : 0.0;
}

std::vector<LengthBucket> length_buckets(const std::vector<SentenceScore>& sentences,
                                         const std::vector<int64_t>& upper) {
  for (std::size_t b = 0; b < upper.size(); ++b) {
    AGF_CHECK(upper[b] >= 0 && (b == 0 || upper[b] > upper[b - 1]),
              "length buckets: the bounds must be ascending and not negative, got {}", fmt::join(upper, ","));
  }
  std::vector<LengthBucket> buckets(upper.size() + 1);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    buckets[b].low = b == 0 ? 0 : upper[b - 1] + 1;
    buckets[b].high = b < upper.size() ? upper[b] : -1;
  }
  for (const SentenceScore& s : sentences) {
    const std::size_t b = static_cast<std::size_t>(std::lower_bound(upper.begin(), upper.end(), s.source_tokens) -
                                                   upper.begin());  // first bound >= length
    buckets[b].pairs += 1;
    buckets[b].target_tokens += s.target_tokens;
    buckets[b].correct += s.correct;
  }
  return buckets;
}

}  // namespace agf::train
