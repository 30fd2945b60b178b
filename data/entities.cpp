#include "data/entities.h"

#include <charconv>

#include "data/utf8.h"

namespace agf::data {

namespace {
// The code point of one reference body (between '&' and ';'), or 0 when it is not one we decode.
char32_t reference_value(std::string_view body) {
  if (body == "amp") return U'&';
  if (body == "lt") return U'<';
  if (body == "gt") return U'>';
  if (body == "quot") return U'"';
  if (body == "apos") return U'\'';
  if (body == "nbsp") return 0xA0;
  if (body.size() >= 2 && body[0] == '#') {
    const bool hex = body[1] == 'x' || body[1] == 'X';
    const std::string_view digits = body.substr(hex ? 2 : 1);
    std::uint32_t value = 0;
    auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value, hex ? 16 : 10);
    if (digits.empty() || result.ec != std::errc() || result.ptr != digits.data() + digits.size()) return 0;
    // only Unicode scalar values, and no NUL: anything else stays literal text
    if (value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
    return value;
  }
  return 0;
}
}  // namespace

std::string decode_entities(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t position = 0;
  while (position < text.size()) {
    const std::size_t amp = text.find('&', position);
    if (amp == std::string_view::npos) {
      out.append(text.substr(position));
      break;
    }
    out.append(text.substr(position, amp - position));
    const std::size_t semicolon = text.find(';', amp + 1);
    const char32_t value = (semicolon != std::string_view::npos && semicolon - amp <= 12)
                               ? reference_value(text.substr(amp + 1, semicolon - amp - 1))
                               : 0;
    if (value != 0) {
      append_utf8(out, value);
      position = semicolon + 1;
    } else {
      out.push_back('&');
      position = amp + 1;
    }
  }
  return out;
}

}  // namespace agf::data
