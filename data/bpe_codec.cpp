#include "data/bpe_codec.h"

#include <omp.h>

#include <atomic>
#include <climits>

#include "core/error.h"
#include "data/pretokenizer.h"
#include "data/utf8.h"

namespace agf::data {

namespace {
std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}
std::atomic<std::uint64_t> next_codec_serial{1};
}  // namespace

// One word -> ids cache per thread. It remembers which codec filled it (by a serial number, not an
// address that a later codec could reuse), and is cleared when another codec uses it or it grows big.
struct BpeCodec::WordCache {
  std::uint64_t owner_serial = 0;
  std::unordered_map<std::string, std::vector<TokenId>> words;
};

BpeCodec::BpeCodec(const BpeModel& model) : model_(model) {
  const auto& merges = model.merges();
  merge_ranks_.reserve(merges.size() * 2);
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    merge_ranks_.emplace(pair_key(merges[rank].first, merges[rank].second), static_cast<std::int32_t>(rank));
  }
  serial_ = next_codec_serial++;
}

BpeCodec::WordCache& BpeCodec::thread_cache(const BpeCodec* owner) {
  thread_local WordCache cache;
  if (cache.owner_serial != owner->serial_ || cache.words.size() > (1u << 20)) {
    cache.words.clear();
    cache.owner_serial = owner->serial_;
  }
  return cache;
}

void BpeCodec::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  // 1. characters -> alphabet ids, or byte tokens
  std::vector<TokenId> symbols;
  symbols.reserve(word.size());
  std::size_t position = 0;
  while (position < word.size()) {
    const std::size_t start = position;
    const char32_t code_point = decode_utf8(word, position);
    const TokenId id = code_point == whitespace_marker ? -1 : model_.id_of_char(code_point);
    if (id >= 0) {
      symbols.push_back(id);
    } else {
      for (std::size_t i = start; i < position; ++i) {
        symbols.push_back(first_byte_id + static_cast<unsigned char>(word[i]));
      }
    }
  }
  // 2. merge the earliest-learned adjacent pair, all its occurrences, until none is left
  const TokenId first_merge = model_.first_merge_id();
  while (symbols.size() > 1) {
    std::int32_t best_rank = INT32_MAX;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto found = merge_ranks_.find(pair_key(symbols[i], symbols[i + 1]));
      if (found != merge_ranks_.end() && found->second < best_rank) best_rank = found->second;
    }
    if (best_rank == INT32_MAX) break;
    const auto [left, right] = model_.merges()[static_cast<std::size_t>(best_rank)];
    std::size_t write = 0;
    for (std::size_t read = 0; read < symbols.size(); ++read) {
      if (read + 1 < symbols.size() && symbols[read] == left && symbols[read + 1] == right) {
        symbols[write++] = first_merge + best_rank;
        ++read;
      } else {
        symbols[write++] = symbols[read];
      }
    }
    symbols.resize(write);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
}

void BpeCodec::encode_append(std::string_view line, std::vector<TokenId>& out) const {
  WordCache& cache = thread_cache(this);
  for_each_word(line, [&](std::string_view word) {
    // std::unordered_map<std::string,...> cannot look up a string_view before C++20's heterogeneous
    // lookup for unordered containers (not in libstdc++ 12), so the key string is built once here.
    thread_local std::string key;
    key.assign(word);
    auto found = cache.words.find(key);
    if (found == cache.words.end()) {
      std::vector<TokenId> ids;
      encode_word(word, ids);
      found = cache.words.emplace(key, std::move(ids)).first;
    }
    out.insert(out.end(), found->second.begin(), found->second.end());
  });
}

std::vector<TokenId> BpeCodec::encode(std::string_view line) const {
  std::vector<TokenId> ids;
  encode_append(line, ids);
  return ids;
}

std::vector<std::vector<TokenId>> BpeCodec::encode_lines(const std::vector<std::string_view>& lines) const {
  std::vector<std::vector<TokenId>> encoded(lines.size());
  const auto count = static_cast<std::int64_t>(lines.size());
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t i = 0; i < count; ++i)
    encode_append(lines[static_cast<std::size_t>(i)], encoded[static_cast<std::size_t>(i)]);
  return encoded;
}

std::string BpeCodec::decode(std::span<const TokenId> ids) const {
  std::string text;
  const auto size = static_cast<TokenId>(model_.vocab_size());
  for (TokenId id : ids) {
    AGF_CHECK(id >= 0 && id < size, "decode: token id {} is outside the vocabulary (size {})", id, size);
    text += model_.surface(id);
  }
  return text;
}

std::vector<std::string> BpeCodec::to_texts(std::span<const TokenId> ids) const {
  std::vector<std::string> texts;
  texts.reserve(ids.size());
  for (TokenId id : ids) texts.push_back(model_.text(id));
  return texts;
}

}  // namespace agf::data
