#include "data/bpe_learn.h"

#include <omp.h>

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "data/pretokenizer.h"
#include "data/utf8.h"

namespace agf::data {

namespace {

using WordCounts = std::unordered_map<std::string_view, std::uint64_t>;

// Step 1, on all threads: each counts its share of lines, then the maps are summed.
WordCounts count_words(const std::vector<std::string_view>& lines) {
  std::vector<WordCounts> partial(static_cast<std::size_t>(omp_get_max_threads()));
  const auto count = static_cast<std::int64_t>(lines.size());
#pragma omp parallel
  {
    WordCounts& mine = partial[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
      for_each_word(lines[static_cast<std::size_t>(i)], [&](std::string_view word) { ++mine[word]; });
    }
  }
  WordCounts total = std::move(partial[0]);
  for (std::size_t t = 1; t < partial.size(); ++t) {
    for (const auto& [word, n] : partial[t]) total[word] += n;
  }
  return total;
}

std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}
TokenId key_left(std::uint64_t key) { return static_cast<TokenId>(key >> 32); }
TokenId key_right(std::uint64_t key) { return static_cast<TokenId>(key & 0xFFFFFFFFu); }

// Step 2.
std::vector<char32_t> choose_alphabet(const std::vector<std::pair<std::string_view, std::uint64_t>>& words,
                                      const BpeLearnOptions& options) {
  std::unordered_map<char32_t, std::uint64_t> char_counts;
  std::uint64_t total = 0;
  for (const auto& [word, n] : words) {
    std::size_t position = 0;
    while (position < word.size()) {
      const char32_t code_point = decode_utf8(word, position);
      if (code_point == whitespace_marker) continue;
      char_counts[code_point] += n;
      total += n;
    }
  }
  std::vector<std::pair<char32_t, std::uint64_t>> ranked(char_counts.begin(), char_counts.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  const std::size_t room = options.vocab_size > std::size_t(first_alphabet_id) ? options.vocab_size - first_alphabet_id
                                                                               : 0;
  std::vector<char32_t> alphabet;
  std::uint64_t covered = 0;
  for (const auto& [code_point, n] : ranked) {
    if (alphabet.size() >= room) break;
    if (total > 0 && double(covered) >= options.character_coverage * double(total)) break;
    alphabet.push_back(code_point);
    covered += n;
  }
  return alphabet;
}

}  // namespace

BpeModel learn_bpe(const std::vector<std::string_view>& lines, const BpeLearnOptions& options) {
  AGF_CHECK(options.vocab_size >= std::size_t(first_alphabet_id) + 1,
            "bpe learn: --vocab-size {} is too small: ids 0..259 are the 4 specials and 256 byte tokens",
            options.vocab_size);
  AGF_CHECK(options.character_coverage > 0 && options.character_coverage <= 1,
            "bpe learn: character coverage {} is not in (0, 1]", options.character_coverage);
  const WordCounts word_counts = count_words(lines);
  // A fixed word order (by text) makes everything below independent of hash-map iteration order.
  std::vector<std::pair<std::string_view, std::uint64_t>> words(word_counts.begin(), word_counts.end());
  std::sort(words.begin(), words.end());
  const std::vector<char32_t> alphabet = choose_alphabet(words, options);

  // Token texts so far, for the tie rule and the uniqueness check.
  BpeModel base(alphabet, {});
  std::vector<std::string> texts;
  std::unordered_map<std::string, TokenId> existing;
  for (std::size_t id = 0; id < base.vocab_size(); ++id) {
    texts.push_back(base.text(static_cast<TokenId>(id)));
    existing.emplace(texts.back(), static_cast<TokenId>(id));
  }

  // Words as symbol sequences; -1 marks a character outside the alphabet (it never pairs).
  std::vector<std::vector<TokenId>> symbols(words.size());
  std::vector<std::uint64_t> frequency(words.size());
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::string_view word = words[w].first;
    frequency[w] = words[w].second;
    std::size_t position = 0;
    while (position < word.size()) {
      const char32_t code_point = decode_utf8(word, position);
      symbols[w].push_back(code_point == whitespace_marker ? -1 : base.id_of_char(code_point));
    }
  }

  std::unordered_map<std::uint64_t, std::int64_t> pair_counts;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> words_with_pair;
  for (std::size_t w = 0; w < symbols.size(); ++w) {
    const auto& s = symbols[w];
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      if (s[i] < 0 || s[i + 1] < 0) continue;
      const std::uint64_t key = pair_key(s[i], s[i + 1]);
      pair_counts[key] += static_cast<std::int64_t>(frequency[w]);
      auto& holders = words_with_pair[key];
      if (holders.empty() || holders.back() != w) holders.push_back(static_cast<std::uint32_t>(w));
    }
  }

  struct Entry {
    std::int64_t count;
    std::uint64_t key;
  };
  // "a before b" for the max-heap means a ranks lower: smaller count, or equal count and larger texts.
  auto ranks_lower = [&texts](const Entry& a, const Entry& b) {
    if (a.count != b.count) return a.count < b.count;
    const int left = texts[key_left(a.key)].compare(texts[key_left(b.key)]);
    if (left != 0) return left > 0;
    return texts[key_right(a.key)].compare(texts[key_right(b.key)]) > 0;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(ranks_lower)> heap(ranks_lower);
  for (const auto& [key, count] : pair_counts) heap.push({count, key});

  std::vector<std::pair<TokenId, TokenId>> merges;
  std::vector<std::uint32_t> visited_at(symbols.size(), UINT32_MAX);  // dedups the pair -> words index
  std::unordered_map<std::uint64_t, std::int64_t> deltas;
  std::vector<TokenId> merged_word;
  const auto min_count = static_cast<std::int64_t>(std::max<std::uint64_t>(options.min_frequency, 1));

  while (texts.size() < options.vocab_size && !heap.empty()) {
    const Entry top = heap.top();
    heap.pop();
    auto current = pair_counts.find(top.key);
    const std::int64_t count = current == pair_counts.end() ? 0 : current->second;
    if (count != top.count) {  // stale entry: counts only fall without a push, so re-queue the truth
      if (count > 0) heap.push({count, top.key});
      continue;
    }
    if (count < min_count) break;
    const TokenId left = key_left(top.key), right = key_right(top.key);
    std::string joined = texts[left] + texts[right];
    if (existing.count(joined)) {  // would duplicate a special or byte token's text: never merge it
      pair_counts.erase(current);
      continue;
    }
    const auto merged = static_cast<TokenId>(texts.size());
    const auto merge_index = static_cast<std::uint32_t>(merges.size());
    merges.emplace_back(left, right);
    existing.emplace(joined, merged);
    texts.push_back(std::move(joined));

    // Replace every occurrence in the words that hold the pair, recording how neighbouring pair
    // counts change: for an occurrence L a b R  ->  L ab R, with f the word's frequency,
    //   count(a,b) -= f, count(L,a) -= f, count(L,ab) += f, count(b,R) -= f, count(ab,R) += f.
    // L is taken from the already-rewritten prefix, so overlapping runs (a b a b) come out right.
    deltas.clear();
    std::vector<std::uint32_t> holders = std::move(words_with_pair[top.key]);
    words_with_pair.erase(top.key);
    for (std::uint32_t w : holders) {
      if (visited_at[w] == merge_index) continue;
      visited_at[w] = merge_index;
      auto& s = symbols[w];
      const auto f = static_cast<std::int64_t>(frequency[w]);
      merged_word.clear();
      bool changed = false;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == left && s[i + 1] == right) {
          changed = true;
          deltas[top.key] -= f;
          if (!merged_word.empty() && merged_word.back() >= 0) {
            const TokenId previous = merged_word.back();
            deltas[pair_key(previous, left)] -= f;
            deltas[pair_key(previous, merged)] += f;
            words_with_pair[pair_key(previous, merged)].push_back(w);
          }
          if (i + 2 < s.size() && s[i + 2] >= 0) {
            const TokenId next = s[i + 2];
            deltas[pair_key(right, next)] -= f;
            deltas[pair_key(merged, next)] += f;
            words_with_pair[pair_key(merged, next)].push_back(w);
          }
          merged_word.push_back(merged);
          ++i;
        } else {
          merged_word.push_back(s[i]);
        }
      }
      if (changed) s = merged_word;
    }
    for (const auto& [key, delta] : deltas) {
      if (delta == 0) continue;
      auto& value = pair_counts[key];
      value += delta;
      if (value <= 0) {
        pair_counts.erase(key);
      } else if (delta > 0) {
        heap.push({value, key});
      }
    }
  }
  return BpeModel(alphabet, std::move(merges));
}

}  // namespace agf::data
