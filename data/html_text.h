#pragma once
// Text of id-carrying elements in an HTML page: the one thing the LibreOffice help builder needs from
// HTML, done with a small tag scanner rather than a full parser (the help pages are machine-generated
// and regular).
//
// For every element whose id satisfies `wanted_id` we return (id, text) in document order, where text
// is the element's character data with
//   - tags removed (<br> counts as a space), comments, <script> and <style> skipped;
//   - content of elements that carry both `hidden` and `class` attributes dropped: the help marks the
//     platform- or module-specific alternatives of a phrase that way (class="MAC", "CALC", ...), while
//     the default alternative is hidden without a class; we keep the default;
//   - entities decoded (entities.h);
//   - runs of ASCII whitespace collapsed to one space, leading and trailing whitespace removed.
// A close tag closes the nearest open element of its name (and any left open inside it); elements
// still open at the end are closed there.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agf::data {

struct IdText {
  std::string id;
  std::string text;
};

std::vector<IdText> extract_id_texts(std::string_view html, const std::function<bool(std::string_view)>& wanted_id);

// Collapses runs of ASCII whitespace (space, \t, \n, \v, \f, \r) to one space and trims both ends.
std::string collapse_whitespace(std::string_view text);

}  // namespace agf::data
