#pragma once
// Decoding HTML/XML character references: the named entities that occur in WMT .sgm files and the
// LibreOffice help (&amp; &lt; &gt; &quot; &apos; &nbsp;) and numeric ones (&#233; &#xE9;). Anything
// else that starts with '&' is kept as it is, since text like "R&D" is common and not an error.
#include <string>
#include <string_view>

namespace agf::data {

std::string decode_entities(std::string_view text);

}  // namespace agf::data
