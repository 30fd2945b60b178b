#include "train/bleu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>

#include "core/error.h"

namespace agf::train {

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

std::vector<std::string> split_spaces(const std::string& text) {
  std::istringstream stream(text);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

using NgramCounts = std::map<std::vector<std::string>, int64_t>;

NgramCounts count_ngrams(const std::vector<std::string>& words, std::size_t order) {
  NgramCounts counts;
  for (std::size_t n = 1; n <= order; ++n) {
    for (std::size_t i = 0; i + n <= words.size(); ++i)
      ++counts[std::vector<std::string>(words.begin() + i, words.begin() + i + n)];
  }
  return counts;
}

}  // namespace

std::string tokenize_13a(const std::string& input) {
  std::string line = input;
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }
  line = " " + line + " ";
  // The four substitutions of mteval-v13a, applied in order, each left to right without overlap (as
  // Python's re.sub does). They only insert ASCII spaces around ASCII characters, so working on UTF-8
  // bytes gives the same result as working on code points.
  static const std::regex punctuation(R"(([\{-\~\[-\` -\&\(-\+\:-\@\/]))");
  static const std::regex period_comma_after_non_digit(R"(([^0-9])([\.,]))");
  static const std::regex period_comma_before_non_digit(R"(([\.,])([^0-9]))");
  static const std::regex dash_after_digit(R"(([0-9])(-))");
  line = std::regex_replace(line, punctuation, " $1 ");
  line = std::regex_replace(line, period_comma_after_non_digit, "$1 $2 ");
  line = std::regex_replace(line, period_comma_before_non_digit, " $1 $2");
  line = std::regex_replace(line, dash_after_digit, "$1 $2 ");
  const std::vector<std::string> words = split_spaces(line);
  std::string joined;
  for (const std::string& word : words) joined += (joined.empty() ? "" : " ") + word;
  return joined;
}

BleuStatistics& BleuStatistics::operator+=(const BleuStatistics& other) {
  for (int n = 0; n < 4; ++n) {
    matches[n] += other.matches[n];
    totals[n] += other.totals[n];
  }
  hypothesis_length += other.hypothesis_length;
  reference_length += other.reference_length;
  return *this;
}

BleuStatistics sentence_bleu_statistics(const std::string& hypothesis_line,
                                        const std::vector<std::string>& references) {
  constexpr std::size_t order = 4;
  AGF_CHECK(!references.empty(), "sentence_bleu_statistics: no references");
  const std::vector<std::string> hypothesis = split_spaces(tokenize_13a(hypothesis_line));
  const int64_t hypothesis_length = static_cast<int64_t>(hypothesis.size());
  BleuStatistics statistics;
  // Clipped counts: each n-gram counts at most as often as in the reference that has it most.
  NgramCounts max_reference_counts;
  int64_t closest_length = -1;
  for (const auto& line : references) {
    const std::vector<std::string> reference = split_spaces(tokenize_13a(line));
    const int64_t length = static_cast<int64_t>(reference.size());
    const int64_t difference = std::abs(length - hypothesis_length);
    const int64_t best = std::abs(closest_length - hypothesis_length);
    if (closest_length < 0 || difference < best || (difference == best && length < closest_length))
      closest_length = length;
    for (const auto& [ngram, count] : count_ngrams(reference, order)) {
      int64_t& kept = max_reference_counts[ngram];
      kept = std::max(kept, count);
    }
  }
  for (const auto& [ngram, count] : count_ngrams(hypothesis, order)) {
    const auto found = max_reference_counts.find(ngram);
    statistics.matches[ngram.size() - 1] += std::min(count, found == max_reference_counts.end() ? 0 : found->second);
  }
  for (std::size_t n = 1; n <= order; ++n)
    statistics.totals[n - 1] += std::max<int64_t>(0, hypothesis_length - static_cast<int64_t>(n) + 1);
  statistics.hypothesis_length = hypothesis_length;
  statistics.reference_length = closest_length;
  return statistics;
}

BleuScore bleu_score(const BleuStatistics& statistics) {
  constexpr std::size_t order = 4;
  const int64_t* correct = statistics.matches;
  const int64_t* total = statistics.totals;
  BleuScore result;
  result.hypothesis_length = statistics.hypothesis_length;
  result.reference_length = statistics.reference_length;
  const int64_t sys = result.hypothesis_length, ref = result.reference_length;
  result.brevity_penalty = sys >= ref
                               ? 1.0
                               : (sys > 0 ? std::exp(1.0 - static_cast<double>(ref) / static_cast<double>(sys)) : 0.0);
  if (std::all_of(correct, correct + order, [](int64_t c) { return c == 0; })) return result;
  // 'exp' smoothing: the k-th precision with no match counts as 100 / (2^k · total).
  double smoothing = 1.0, log_sum = 0.0;
  for (std::size_t n = 0; n < order; ++n) {
    if (total[n] == 0) {  // hypotheses too short for n-grams: precision 0, BLEU 0 (as sacreBLEU)
      result.precisions[n] = 0;
      log_sum += -9999999999.0;
      continue;
    }
    if (correct[n] == 0) {
      smoothing *= 2;
      result.precisions[n] = 100.0 / (smoothing * static_cast<double>(total[n]));
    } else {
      result.precisions[n] = 100.0 * static_cast<double>(correct[n]) / static_cast<double>(total[n]);
    }
    log_sum += std::log(result.precisions[n]);
  }
  result.score = result.brevity_penalty * std::exp(log_sum / order);
  return result;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) {
  AGF_CHECK(!references.empty(), "corpus_bleu: no references");
  for (const auto& set : references) {
    AGF_CHECK(set.size() == hypotheses.size(), "corpus_bleu: {} hypotheses but a reference set has {} lines",
              hypotheses.size(), set.size());
  }
  BleuStatistics total;
  std::vector<std::string> sentence_references(references.size());
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    for (std::size_t r = 0; r < references.size(); ++r) sentence_references[r] = references[r][i];
    total += sentence_bleu_statistics(hypotheses[i], sentence_references);
  }
  return bleu_score(total);
}

std::string BleuScore::to_string() const {
  const double ratio = reference_length ? static_cast<double>(hypothesis_length) / static_cast<double>(reference_length)
                                        : 0;
  return fmt::format("BLEU = {:.2f} {:.1f}/{:.1f}/{:.1f}/{:.1f} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
                     score, precisions[0], precisions[1], precisions[2], precisions[3], brevity_penalty, ratio,
                     hypothesis_length, reference_length);
}

}  // namespace agf::train
