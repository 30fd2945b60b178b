#include "train/sentence_scores.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
    // A translation may hold invalid UTF-8 (a model can stop inside a character's bytes): written with U+FFFD in
    // its place; the BLEU statistics beside it were counted on the bytes themselves.
    text += line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  data::write_file(path, text, /*compress_xz=*/path.ends_with(".xz"));
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
    // A count: a whole number (1.5 is not read as 1) and not negative.
    auto count = [&](const nlohmann::json& object, auto key) {
      const nlohmann::json& value = object.at(key);
      AGF_CHECK(value.is_number_integer() && value.get<int64_t>() >= 0,
                "{}:{}: '{}' must be a whole number >= 0, got {}", path, number, key, value.dump());
      return value.get<int64_t>();
    };
    try {
      s.index = count(line, "index");
      s.source_tokens = count(line, "source_tokens");
      s.target_tokens = count(line, "target_tokens");
      s.correct = count(line, "correct");
      s.nll = line.at("nll").get<double>();
      if (line.contains("hypothesis")) {
        s.translated = true;
        s.hypothesis = line.at("hypothesis").get<std::string>();
        s.reference = line.at("reference").get<std::string>();
        const auto& bleu = line.at("bleu");
        const auto& matches = bleu.at("matches");
        const auto& totals = bleu.at("totals");
        AGF_CHECK(matches.is_array() && totals.is_array() && matches.size() == 4 && totals.size() == 4,
                  "{}:{}: 'bleu' needs 4 matches and 4 totals", path, number);
        for (int n = 0; n < 4; ++n) {
          s.bleu.matches[n] = count(matches, static_cast<std::size_t>(n));
          s.bleu.totals[n] = count(totals, static_cast<std::size_t>(n));
          AGF_CHECK(s.bleu.matches[n] <= s.bleu.totals[n], "{}:{}: {}-gram matches {} exceed their total {}", path,
                    number, n + 1, s.bleu.matches[n], s.bleu.totals[n]);
        }
        s.bleu.hypothesis_length = count(bleu, "hyp_len");
        s.bleu.reference_length = count(bleu, "ref_len");
      }
    } catch (const nlohmann::json::exception& error) {
      fail("{}:{}: {}", path, number, error.what());
    }
    AGF_CHECK(s.target_tokens >= 1 && s.correct <= s.target_tokens && std::isfinite(s.nll) && s.nll >= 0,
              "{}:{}: counts out of range (target_tokens {}, correct {}, nll {})", path, number, s.target_tokens,
              s.correct, s.nll);
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
    buckets[b].source_tokens += s.source_tokens;
    buckets[b].target_tokens += s.target_tokens;
    buckets[b].correct += s.correct;
  }
  return buckets;
}

}  // namespace agf::train
