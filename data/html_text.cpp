#include "data/html_text.h"

#include <algorithm>
#include <cctype>

#include "data/entities.h"

namespace agf::data {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_void_element(std::string_view name) {
  static constexpr std::string_view names[] = {"area",  "base", "br",   "col",    "embed", "hr", "img",
                                               "input", "link", "meta", "source", "track", "wbr"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

struct Tag {
  std::string name;  // lower case, without '/'
  bool closing = false;
  bool self_closing = false;
  std::string id;
  bool has_hidden = false;
  bool has_class = false;
};

// Parses the inside of "<...>" (without the angle brackets).
Tag parse_tag(std::string_view inside) {
  Tag tag;
  std::size_t i = 0;
  if (i < inside.size() && inside[i] == '/') {
    tag.closing = true;
    ++i;
  }
  const std::size_t name_start = i;
  while (i < inside.size() && !is_space(inside[i]) && inside[i] != '/') ++i;
  tag.name = lower(inside.substr(name_start, i - name_start));
  if (!inside.empty() && inside.back() == '/') tag.self_closing = true;
  while (i < inside.size()) {
    while (i < inside.size() && (is_space(inside[i]) || inside[i] == '/')) ++i;
    const std::size_t attribute_start = i;
    while (i < inside.size() && !is_space(inside[i]) && inside[i] != '=' && inside[i] != '/') ++i;
    const std::string attribute = lower(inside.substr(attribute_start, i - attribute_start));
    if (attribute.empty()) {
      ++i;
      continue;
    }
    std::string value;
    while (i < inside.size() && is_space(inside[i])) ++i;
    if (i < inside.size() && inside[i] == '=') {
      ++i;
      while (i < inside.size() && is_space(inside[i])) ++i;
      if (i < inside.size() && (inside[i] == '"' || inside[i] == '\'')) {
        const char quote = inside[i++];
        const std::size_t end = std::min(inside.find(quote, i), inside.size());
        value = std::string(inside.substr(i, end - i));
        i = end + 1;
      } else {
        const std::size_t value_start = i;
        while (i < inside.size() && !is_space(inside[i])) ++i;
        value = std::string(inside.substr(value_start, i - value_start));
      }
    }
    if (attribute == "id") tag.id = decode_entities(value);
    if (attribute == "hidden") tag.has_hidden = true;
    if (attribute == "class") tag.has_class = true;
  }
  return tag;
}

struct OpenElement {
  std::string name;
  int collector = -1;  // index into the results, or -1
  bool skipped = false;
};

}  // namespace

std::string collapse_whitespace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char c : text) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::vector<IdText> extract_id_texts(std::string_view html, const std::function<bool(std::string_view)>& wanted_id) {
  std::vector<IdText> results;
  std::vector<OpenElement> stack;
  std::vector<int> open_collectors;  // indexes of results whose element is open
  int skip_depth = 0;                // open elements whose content is dropped

  auto append_text = [&](std::string_view raw) {
    if (skip_depth > 0 || open_collectors.empty() || raw.empty()) return;
    const std::string text = decode_entities(raw);
    for (int collector : open_collectors) results[static_cast<std::size_t>(collector)].text += text;
  };
  auto close_top = [&] {
    const OpenElement& top = stack.back();
    if (top.skipped) --skip_depth;
    if (top.collector >= 0) std::erase(open_collectors, top.collector);
    stack.pop_back();
  };

  std::size_t position = 0;
  while (position < html.size()) {
    const std::size_t lt = html.find('<', position);
    if (lt == std::string_view::npos) {
      append_text(html.substr(position));
      break;
    }
    append_text(html.substr(position, lt - position));
    if (html.compare(lt, 4, "<!--") == 0) {
      const std::size_t end = html.find("-->", lt + 4);
      position = end == std::string_view::npos ? html.size() : end + 3;
      continue;
    }
    const std::size_t gt = html.find('>', lt + 1);
    if (gt == std::string_view::npos) {  // a lone '<' at the end: text
      append_text(html.substr(lt));
      break;
    }
    const std::string_view inside = html.substr(lt + 1, gt - lt - 1);
    position = gt + 1;
    if (inside.empty() || inside[0] == '!' || inside[0] == '?') continue;
    if (!(std::isalpha(static_cast<unsigned char>(inside[0])) || inside[0] == '/')) {  // "a < b": text
      append_text(html.substr(lt, 1));
      position = lt + 1;
      continue;
    }
    Tag tag = parse_tag(inside);
    if (tag.closing) {
      auto match = std::find_if(stack.rbegin(), stack.rend(), [&](const OpenElement& e) { return e.name == tag.name; });
      if (match != stack.rend()) {
        const std::size_t keep = static_cast<std::size_t>(stack.rend() - match) - 1;
        while (stack.size() > keep) close_top();
      }
      continue;
    }
    if (tag.name == "script" || tag.name == "style") {
      const std::size_t end = html.find("</" + tag.name, position);
      position = end == std::string_view::npos ? html.size() : html.find('>', end) + 1;
      if (position == 0) position = html.size();
      continue;
    }
    if (tag.name == "br") append_text(" ");
    if (tag.self_closing || is_void_element(tag.name)) continue;
    OpenElement element{tag.name, -1, tag.has_hidden && tag.has_class};
    if (element.skipped) ++skip_depth;
    if (!tag.id.empty() && skip_depth == 0 && wanted_id(tag.id)) {
      element.collector = static_cast<int>(results.size());
      results.push_back({tag.id, ""});
      open_collectors.push_back(element.collector);
    }
    stack.push_back(std::move(element));
  }
  while (!stack.empty()) close_top();
  for (auto& result : results) result.text = collapse_whitespace(result.text);
  return results;
}

}  // namespace agf::data
