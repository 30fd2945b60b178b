#pragma once
// Reading and writing text files, with transparent xz (de)compression: a file whose first bytes are
// the xz magic (FD 37 7A 58 5A 00) is decompressed on read, whatever its name, so committed corpora
// may be stored as .xz and read like plain text.
#include <string>
#include <string_view>
#include <vector>

namespace agf::data {

// The whole file, decompressed when it is xz. Throws agf::Error naming the path when unreadable.
std::string read_file(const std::string& path);

// Splits on '\n'. A final line without '\n' still counts; a trailing "\r" is kept (see read_lines).
std::vector<std::string_view> split_lines(std::string_view text);

// The lines of a text file (read_file + split_lines), with one trailing '\r' removed from each line
// so that files written on Windows read the same.
std::vector<std::string> read_lines(const std::string& path);

// Writes `content` to `path`, xz-compressed (preset 9, CRC64, one thread: deterministic for a given
// liblzma version) when `compress_xz`. Throws agf::Error naming the path on failure.
void write_file(const std::string& path, std::string_view content, bool compress_xz = false);

std::string xz_compress(std::string_view data);
std::string xz_decompress(std::string_view data, const std::string& name_for_errors);
bool is_xz(std::string_view data);

}  // namespace agf::data
