#include "data/line_checks.h"

#include "core/error.h"
#include "data/utf8.h"

namespace agf::data {

void require_utf8(std::string_view line, const std::string& file, std::size_t line_number) {
  if (auto bad = find_invalid_utf8(line)) {
    fail("{}:{}: invalid UTF-8 at byte {} of the line (byte 0x{:02X})", file, line_number, *bad + 1,
         static_cast<unsigned char>(line[*bad]));
  }
}

}  // namespace agf::data
