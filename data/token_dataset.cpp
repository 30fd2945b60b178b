#include "data/token_dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "data/text_file.h"

namespace agf::data {

static_assert(std::endian::native == std::endian::little, "the token dataset format is little-endian");

namespace {
constexpr char magic[8] = {'A', 'G', 'F', 'T', 'O', 'K', 'S', '1'};
constexpr std::uint32_t format_version = 1;
constexpr std::uint32_t header_size = 64;

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_size;
  std::uint64_t vocab_hash;
  std::uint64_t vocab_size;
  std::uint64_t pairs;
  std::uint64_t source_tokens;
  std::uint64_t target_tokens;
  std::uint64_t file_size;
};
static_assert(sizeof(Header) == header_size);

template <class T>
void append_raw(std::string& out, const T* data, std::size_t count) {
  out.append(reinterpret_cast<const char*>(data), count * sizeof(T));
}
}  // namespace

void write_token_dataset(const std::string& path, const TokenPairs& pairs, std::uint64_t vocab_hash,
                         std::uint64_t vocab_size) {
  AGF_CHECK(pairs.source.size() == pairs.target.size(), "write_token_dataset: {} source but {} target sequences",
            pairs.source.size(), pairs.target.size());
  const std::size_t n = pairs.source.size();
  std::vector<std::uint64_t> source_offsets(n + 1, 0), target_offsets(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    source_offsets[i + 1] = source_offsets[i] + pairs.source[i].size();
    target_offsets[i + 1] = target_offsets[i] + pairs.target[i].size();
  }
  Header header{};
  std::memcpy(header.magic, magic, sizeof magic);
  header.version = format_version;
  header.header_size = header_size;
  header.vocab_hash = vocab_hash;
  header.vocab_size = vocab_size;
  header.pairs = n;
  header.source_tokens = source_offsets[n];
  header.target_tokens = target_offsets[n];
  header.file_size = header_size + 2 * (n + 1) * sizeof(std::uint64_t) +
                     (header.source_tokens + header.target_tokens) * sizeof(std::int32_t);
  std::string bytes;
  bytes.reserve(header.file_size);
  append_raw(bytes, &header, 1);
  append_raw(bytes, source_offsets.data(), source_offsets.size());
  append_raw(bytes, target_offsets.data(), target_offsets.size());
  for (const auto& ids : pairs.source) append_raw(bytes, ids.data(), ids.size());
  for (const auto& ids : pairs.target) append_raw(bytes, ids.data(), ids.size());
  write_file(path, bytes);
}

TokenDataset TokenDataset::open(const std::string& path, std::optional<std::uint64_t> expected_vocab_hash) {
  TokenDataset dataset;
  dataset.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY);
  AGF_CHECK(fd >= 0, "cannot open token dataset '{}': {}", path, std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    fail("cannot stat '{}': {}", path, std::strerror(errno));
  }
  const auto file_size = static_cast<std::uint64_t>(info.st_size);
  if (file_size < header_size) {
    ::close(fd);
    fail("'{}' is not an agf token dataset: {} bytes, shorter than the {}-byte header", path, file_size, header_size);
  }
  void* mapping = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  AGF_CHECK(mapping != MAP_FAILED, "cannot map '{}': {}", path, std::strerror(errno));
  dataset.mapping_ = mapping;
  dataset.mapping_size_ = file_size;
  // From here `dataset` owns the mapping: a failed check below unmaps it in the destructor.

  Header header;
  std::memcpy(&header, mapping, sizeof header);
  AGF_CHECK(std::memcmp(header.magic, magic, sizeof magic) == 0,
            "'{}' is not an agf token dataset (its first bytes are not \"AGFTOKS1\")", path);
  AGF_CHECK(header.version == format_version && header.header_size == header_size,
            "'{}': token dataset version {} (header {} bytes) is not supported; this agf reads version {}", path,
            header.version, header.header_size, format_version);
  // Sizes are checked piecewise against the real file size first, so that absurd counts in a corrupt
  // header cannot overflow the arithmetic.
  const std::uint64_t room = file_size - header_size;
  AGF_CHECK(header.pairs < room / 16 + 1 && header.source_tokens <= room / 4 && header.target_tokens <= room / 4,
            "'{}' is truncated or corrupt: its header counts ({} pairs, {} + {} tokens) do not fit in {} bytes", path,
            header.pairs, header.source_tokens, header.target_tokens, file_size);
  const std::uint64_t expected_size = header_size + 2 * (header.pairs + 1) * sizeof(std::uint64_t) +
                                      (header.source_tokens + header.target_tokens) * sizeof(std::int32_t);
  AGF_CHECK(header.file_size == expected_size,
            "'{}' is corrupt: its header gives a file size of {} bytes, but its counts imply {}", path,
            header.file_size, expected_size);
  AGF_CHECK(file_size == expected_size, "'{}' is truncated or has trailing bytes: {} bytes, expected {}", path,
            file_size, expected_size);
  if (expected_vocab_hash) {
    AGF_CHECK(header.vocab_hash == *expected_vocab_hash,
              "'{}' was made with another BPE model (vocabulary hash {:016x}, expected {:016x})", path,
              header.vocab_hash, *expected_vocab_hash);
  }
  const auto* base = static_cast<const char*>(mapping);
  dataset.pairs_ = header.pairs;
  dataset.vocab_hash_ = header.vocab_hash;
  dataset.vocab_size_ = header.vocab_size;
  dataset.source_offsets_ = reinterpret_cast<const std::uint64_t*>(base + header_size);
  dataset.target_offsets_ = dataset.source_offsets_ + header.pairs + 1;
  dataset.source_ids_ = reinterpret_cast<const std::int32_t*>(dataset.target_offsets_ + header.pairs + 1);
  dataset.target_ids_ = dataset.source_ids_ + header.source_tokens;

  auto check_offsets = [&](const std::uint64_t* offsets, std::uint64_t total, const char* side) {
    AGF_CHECK(offsets[0] == 0 && offsets[header.pairs] == total, "'{}' is corrupt: {} offsets do not span 0..{}", path,
              side, total);
    for (std::uint64_t i = 0; i < header.pairs; ++i) {
      AGF_CHECK(offsets[i] <= offsets[i + 1], "'{}' is corrupt: {} offsets decrease at pair {}", path, side, i);
    }
  };
  check_offsets(dataset.source_offsets_, header.source_tokens, "source");
  check_offsets(dataset.target_offsets_, header.target_tokens, "target");
  const std::uint64_t all_ids = header.source_tokens + header.target_tokens;
  for (std::uint64_t k = 0; k < all_ids; ++k) {
    const std::int32_t id = dataset.source_ids_[k];
    AGF_CHECK(id >= 0 && static_cast<std::uint64_t>(id) < header.vocab_size,
              "'{}' is corrupt: token {} has id {}, outside the vocabulary of {}", path, k, id, header.vocab_size);
  }
  return dataset;
}

TokenDataset::TokenDataset(TokenDataset&& other) noexcept { *this = std::move(other); }

TokenDataset& TokenDataset::operator=(TokenDataset&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
    pairs_ = std::exchange(other.pairs_, 0);
    vocab_hash_ = other.vocab_hash_;
    vocab_size_ = other.vocab_size_;
    source_offsets_ = other.source_offsets_;
    target_offsets_ = other.target_offsets_;
    source_ids_ = other.source_ids_;
    target_ids_ = other.target_ids_;
  }
  return *this;
}

TokenDataset::~TokenDataset() { release(); }

void TokenDataset::release() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
  mapping_ = nullptr;
}

}  // namespace agf::data
