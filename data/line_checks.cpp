#include "data/line_checks.h"

#include "core/error.h"
#include "data/utf8.h"

namespace agf::data {

void require_utf8(std::string_view text, const std::string& file, std::size_t line_number, std::size_t offset,
                  std::string_view unit) {
  if (auto bad = find_invalid_utf8(text)) {
    fail("{}:{}: invalid UTF-8 at byte {} of the {} (byte 0x{:02X})", file, line_number, offset + *bad + 1, unit,
         static_cast<unsigned char>(text[*bad]));
  }
}

}  // namespace agf::data
