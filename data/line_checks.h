#pragma once
// Checks shared by every reader of text lines: valid UTF-8, reported with file and line.
#include <string>
#include <string_view>

namespace agf::data {

// Throws agf::Error "FILE:LINE: invalid UTF-8 at byte K" when `line` is not valid UTF-8.
// `line_number` counts from 1.
void require_utf8(std::string_view line, const std::string& file, std::size_t line_number);

}  // namespace agf::data
