#pragma once
// Checks shared by every reader of text lines: valid UTF-8, reported with file and line.
#include <string>
#include <string_view>

namespace agf::data {

// Throws agf::Error "FILE:LINE: invalid UTF-8 at byte K of the line (byte 0xXX)" when `text` is not valid
// UTF-8. `text` is the line, or the part of it that starts at byte `offset` (a TSV column: K still counts
// in the line), or, with `unit` "segment", an .sgm segment's text. `line_number` and K count from 1.
void require_utf8(std::string_view text, const std::string& file, std::size_t line_number, std::size_t offset = 0,
                  std::string_view unit = "line");

}  // namespace agf::data
