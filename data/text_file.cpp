#include "data/text_file.h"

#include <lzma.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace agf::data {

bool is_xz(std::string_view data) {
  static constexpr unsigned char magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
  return data.size() >= 6 && std::memcmp(data.data(), magic, 6) == 0;
}

std::string read_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  AGF_CHECK(file != nullptr, "cannot open '{}': {}", path, std::strerror(errno));
  std::string content;
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) content.append(buffer, got);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  AGF_CHECK(!failed, "error reading '{}'", path);
  if (is_xz(content)) return xz_decompress(content, path);
  return content;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> read_lines(const std::string& path) {
  const std::string content = read_file(path);
  std::vector<std::string> lines;
  for (std::string_view line : split_lines(content)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
  }
  return lines;
}

void write_file(const std::string& path, std::string_view content, bool compress_xz) {
  std::string compressed;
  if (compress_xz) {
    compressed = xz_compress(content);
    content = compressed;
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  AGF_CHECK(file != nullptr, "cannot create '{}': {}", path, std::strerror(errno));
  const std::size_t written = std::fwrite(content.data(), 1, content.size(), file);
  const bool closed = std::fclose(file) == 0;
  AGF_CHECK(written == content.size() && closed, "error writing '{}'", path);
}

namespace {
// The most memory the decoder may take. liblzma sizes its dictionary from the block header (up to 4 GiB);
// xz -9e needs 65 MiB to decompress, so 256 MiB refuses nothing that xz makes by its presets, and a hostile
// header cannot size a larger allocation.
constexpr uint64_t xz_memory_limit = 256ull << 20;

// Runs an initialised lzma stream over `input` to the end, collecting its output.
std::string run_lzma(lzma_stream& stream, std::string_view input, const std::string& name_for_errors) {
  std::string output;
  char buffer[1 << 16];
  stream.next_in = reinterpret_cast<const uint8_t*>(input.data());
  stream.avail_in = input.size();
  lzma_ret status = LZMA_OK;
  while (status == LZMA_OK) {
    stream.next_out = reinterpret_cast<uint8_t*>(buffer);
    stream.avail_out = sizeof buffer;
    status = lzma_code(&stream, LZMA_FINISH);
    output.append(buffer, sizeof buffer - stream.avail_out);
  }
  lzma_end(&stream);
  AGF_CHECK(status != LZMA_MEMLIMIT_ERROR,
            "'{}': xz data needs more than {} MiB to decompress (a dictionary larger "
            "than xz -9e uses: corrupt, or not made for agf)",
            name_for_errors, xz_memory_limit >> 20);
  AGF_CHECK(status == LZMA_STREAM_END, "'{}': xz data is corrupt or truncated (liblzma status {})", name_for_errors,
            static_cast<int>(status));
  return output;
}
}  // namespace

std::string xz_compress(std::string_view data) {
  lzma_stream stream = LZMA_STREAM_INIT;
  AGF_CHECK(lzma_easy_encoder(&stream, 9, LZMA_CHECK_CRC64) == LZMA_OK, "liblzma: cannot start the encoder");
  return run_lzma(stream, data, "xz output");
}

std::string xz_decompress(std::string_view data, const std::string& name_for_errors) {
  lzma_stream stream = LZMA_STREAM_INIT;
  AGF_CHECK(lzma_stream_decoder(&stream, xz_memory_limit, 0) == LZMA_OK, "liblzma: cannot start the decoder");
  return run_lzma(stream, data, name_for_errors);
}

}  // namespace agf::data
