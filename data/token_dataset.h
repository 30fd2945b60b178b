#pragma once
// A binarized parallel dataset: the BPE ids of every (source, target) pair in one flat file, read
// through a memory map so that opening costs nothing and many processes share the pages.
//
// The ids are the raw BPE ids of each side: no bos/eos. Those are added when a batch is made
// (sequence_batch.h): encoder input = ids + eos, decoder input = bos + ids, target = ids + eos.
//
// File layout, little-endian (docs/bpe.md):
//   0   char[8]  magic "AGFTOKS1"
//   8   u32      format version (1)
//   12  u32      header size in bytes (64)
//   16  u64      vocabulary hash (BpeModel::hash of the model that made the ids)
//   24  u64      vocabulary size (every id is below it)
//   32  u64      number of pairs n
//   40  u64      source tokens in all (S)
//   48  u64      target tokens in all (T)
//   56  u64      total file size in bytes (catches truncation)
//   64  u64[n+1] source offsets (in tokens; first 0, last S, non-decreasing)
//       u64[n+1] target offsets (first 0, last T)
//       i32[S]   source ids, pair after pair
//       i32[T]   target ids
// Opening checks all of it (magic, version, sizes, offsets, every id below the vocabulary size) and
// throws agf::Error naming the file and what is wrong.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace agf::data {

struct TokenPairs {
  std::vector<std::vector<std::int32_t>> source, target;
};

// Writes the dataset file. Sizes of `source` and `target` must agree.
void write_token_dataset(const std::string& path, const TokenPairs& pairs, std::uint64_t vocab_hash,
                         std::uint64_t vocab_size);

class TokenDataset {
 public:
  // `expected_vocab_hash`: when given, a dataset made with another BPE model is refused.
  static TokenDataset open(const std::string& path, std::optional<std::uint64_t> expected_vocab_hash = std::nullopt);

  TokenDataset(TokenDataset&& other) noexcept;
  TokenDataset& operator=(TokenDataset&& other) noexcept;
  TokenDataset(const TokenDataset&) = delete;
  TokenDataset& operator=(const TokenDataset&) = delete;
  ~TokenDataset();

  std::size_t size() const { return pairs_; }
  std::span<const std::int32_t> source(std::size_t i) const {
    return {source_ids_ + source_offsets_[i], source_ids_ + source_offsets_[i + 1]};
  }
  std::span<const std::int32_t> target(std::size_t i) const {
    return {target_ids_ + target_offsets_[i], target_ids_ + target_offsets_[i + 1]};
  }
  std::uint64_t vocab_hash() const { return vocab_hash_; }
  std::uint64_t vocab_size() const { return vocab_size_; }
  std::uint64_t source_tokens() const { return source_offsets_[pairs_]; }
  std::uint64_t target_tokens() const { return target_offsets_[pairs_]; }
  const std::string& path() const { return path_; }

 private:
  TokenDataset() = default;
  void release();

  std::string path_;
  void* mapping_ = nullptr;
  std::size_t mapping_size_ = 0;
  std::size_t pairs_ = 0;
  std::uint64_t vocab_hash_ = 0, vocab_size_ = 0;
  const std::uint64_t* source_offsets_ = nullptr;
  const std::uint64_t* target_offsets_ = nullptr;
  const std::int32_t* source_ids_ = nullptr;
  const std::int32_t* target_ids_ = nullptr;
};

}  // namespace agf::data
