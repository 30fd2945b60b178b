#include "data/bpe_model.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/text_file.h"
#include "data/utf8.h"

namespace agf::data {

namespace {

constexpr const char* format_name = "agf-bpe";
constexpr int format_version = 1;

// FNV-1a, 64 bit: h = (h xor byte) * 1099511628211, from offset basis 14695981039346656037.
struct Fnv1a {
  std::uint64_t state = 14695981039346656037ull;
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) state = (state ^ bytes[i]) * 1099511628211ull;
  }
  void add_u32(std::uint32_t value) {
    unsigned char bytes[4] = {static_cast<unsigned char>(value), static_cast<unsigned char>(value >> 8),
                              static_cast<unsigned char>(value >> 16), static_cast<unsigned char>(value >> 24)};
    add(bytes, 4);
  }
};

std::string char_text(char32_t code_point) {
  std::string text;
  append_utf8(text, code_point == U' ' ? whitespace_marker : code_point);
  return text;
}

}  // namespace

BpeModel::BpeModel(std::vector<char32_t> alphabet, std::vector<std::pair<TokenId, TokenId>> merges)
    : alphabet_(std::move(alphabet)), merges_(std::move(merges)) {
  ascii_ids_.fill(-1);
  auto add_token = [&](std::string text, std::string surface) {
    const auto id = static_cast<TokenId>(texts_.size());
    AGF_CHECK(ids_by_text_.emplace(text, id).second, "BPE model: token text '{}' appears twice", text);
    texts_.push_back(std::move(text));
    surfaces_.push_back(std::move(surface));
  };
  add_token("<pad>", "");
  add_token("<unk>", "\xEF\xBF\xBD");
  add_token("<s>", "");
  add_token("</s>", "");
  for (int byte = 0; byte < 256; ++byte) add_token(fmt::format("<0x{:02X}>", byte), std::string(1, char(byte)));
  Fnv1a hash;
  hash.add_u32(static_cast<std::uint32_t>(alphabet_.size()));
  for (char32_t code_point : alphabet_) {
    AGF_CHECK(code_point <= 0x10FFFF && !(code_point >= 0xD800 && code_point <= 0xDFFF) &&
                  code_point != whitespace_marker,
              "BPE model: U+{:04X} cannot be in the alphabet", static_cast<std::uint32_t>(code_point));
    const auto id = static_cast<TokenId>(texts_.size());
    std::string surface;
    append_utf8(surface, code_point);
    add_token(char_text(code_point), std::move(surface));
    if (code_point < 128) ascii_ids_[code_point] = id;
    else char_ids_.emplace(code_point, id);
    hash.add_u32(static_cast<std::uint32_t>(code_point));
  }
  hash.add_u32(static_cast<std::uint32_t>(merges_.size()));
  for (auto [left, right] : merges_) {
    const auto next = static_cast<TokenId>(texts_.size());
    AGF_CHECK(left >= first_alphabet_id && right >= first_alphabet_id && left < next && right < next,
              "BPE model: merge {} joins ids ({}, {}), which are not earlier alphabet or merge tokens",
              next - first_merge_id(), left, right);
    add_token(texts_[left] + texts_[right], surfaces_[left] + surfaces_[right]);
    hash.add_u32(static_cast<std::uint32_t>(left));
    hash.add_u32(static_cast<std::uint32_t>(right));
  }
  hash_ = hash.state;
}

TokenId BpeModel::id_of_text(const std::string& text) const {
  auto found = ids_by_text_.find(text);
  return found == ids_by_text_.end() ? -1 : found->second;
}

std::string BpeModel::to_json() const {
  nlohmann::ordered_json json;
  json["format"] = format_name;
  json["version"] = format_version;
  json["pretokenizer"] = "agf-split-v1";
  json["whitespace_marker"] = whitespace_marker_utf8;
  json["special_tokens"] = {{"<pad>", pad_id}, {"<unk>", unk_id}, {"<s>", bos_id}, {"</s>", eos_id}};
  json["byte_fallback"] = {{"first_id", first_byte_id}, {"count", 256}};
  json["first_alphabet_id"] = first_alphabet_id;
  json["vocab_size"] = vocab_size();
  json["hash"] = fmt::format("{:016x}", hash_);
  auto alphabet = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < alphabet_.size(); ++i) alphabet.push_back(texts_[first_alphabet_id + i]);
  json["alphabet"] = std::move(alphabet);
  auto merges = nlohmann::ordered_json::array();
  for (auto [left, right] : merges_) merges.push_back({texts_[left], texts_[right]});
  json["merges"] = std::move(merges);
  return json.dump(1) + "\n";
}

void BpeModel::save(const std::string& path) const { write_file(path, to_json()); }

BpeModel BpeModel::load(const std::string& path) { return from_json(read_file(path), path); }

namespace {
// The fields that describe the fixed id layout and the size are not read (the layout is agf's, the size
// follows from the alphabet and merges), so an edit to them would change nothing: refused instead, so that
// nobody believes a changed "vocab_size" or "byte_fallback" took effect. Each is optional.
void check_recorded_layout(const nlohmann::json& json, const BpeModel& model, const std::string& name) {
  auto check = [&](const std::string& path, const nlohmann::json& actual) {
    const nlohmann::json::json_pointer field(path);
    if (!json.contains(field)) return;
    AGF_CHECK(json.at(field) == actual,
              "'{}': \"{}\" is {} but the model has {} (edited or corrupt file; agf's "
              "layout is fixed, and the size follows from the alphabet and merges)",
              name, path.substr(1), json.at(field).dump(), actual.dump());
  };
  check("/vocab_size", model.vocab_size());
  check("/first_alphabet_id", first_alphabet_id);
  check("/byte_fallback/first_id", first_byte_id);
  check("/byte_fallback/count", 256);
  check("/special_tokens", {{"<pad>", pad_id}, {"<unk>", unk_id}, {"<s>", bos_id}, {"</s>", eos_id}});
  check("/pretokenizer", "agf-split-v1");
  check("/whitespace_marker", whitespace_marker_utf8);
}
}  // namespace

BpeModel BpeModel::from_json(const std::string& json_text, const std::string& name) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& error) {
    fail("'{}' is not a BPE model: not valid JSON ({})", name, error.what());
  }
  try {
    AGF_CHECK(json.is_object() && json.value("format", "") == format_name,
              "'{}' is not a BPE model: its \"format\" is not \"{}\"", name, format_name);
    // Compared as JSON, not through get<int>(): 1.9 would truncate to 1, and 1e300 is undefined behaviour.
    AGF_CHECK(json.contains("version") && json.at("version") == format_version,
              "'{}': BPE model version {} is not supported (this agf reads {})", name,
              json.contains("version") ? json.at("version").dump() : "(missing)", format_version);
    for (const char* field : {"alphabet", "merges"}) {
      AGF_CHECK(json.contains(field) && json.at(field).is_array(), "'{}': the BPE model's \"{}\" is {}, not an array",
                name, field, json.contains(field) ? json.at(field).type_name() : "missing");
    }
    std::vector<char32_t> alphabet;
    std::unordered_map<std::string, TokenId> ids;
    for (const auto& entry : json.at("alphabet")) {
      AGF_CHECK(entry.is_string(), "'{}': alphabet entry {} is {}, not a string", name, alphabet.size(),
                entry.type_name());
      const auto text = entry.get<std::string>();
      std::size_t position = 0;
      AGF_CHECK(!text.empty() && is_valid_utf8(text), "'{}': alphabet entry '{}' is not one UTF-8 character", name,
                text);
      char32_t code_point = decode_utf8(text, position);
      AGF_CHECK(position == text.size(), "'{}': alphabet entry '{}' is not one character", name, text);
      if (code_point == whitespace_marker) code_point = U' ';
      ids.emplace(text, first_alphabet_id + static_cast<TokenId>(alphabet.size()));
      alphabet.push_back(code_point);
    }
    std::vector<std::pair<TokenId, TokenId>> merges;
    TokenId next = first_alphabet_id + static_cast<TokenId>(alphabet.size());
    for (const auto& entry : json.at("merges")) {
      AGF_CHECK(entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string(),
                "'{}': merge {} is not a pair of token texts", name, merges.size());
      const auto left = entry[0].get<std::string>(), right = entry[1].get<std::string>();
      auto left_id = ids.find(left), right_id = ids.find(right);
      AGF_CHECK(left_id != ids.end() && right_id != ids.end(),
                "'{}': merge {} ('{}', '{}') refers to a token not defined before it", name, merges.size(), left,
                right);
      merges.emplace_back(left_id->second, right_id->second);
      ids.emplace(left + right, next++);
    }
    BpeModel model;
    try {
      model = BpeModel(std::move(alphabet), std::move(merges));
    } catch (const Error& error) {  // a token text twice, a character not allowed: name the file
      fail("'{}': {}", name, error.what());
    }
    if (json.contains("hash")) {
      AGF_CHECK(json["hash"].get<std::string>() == fmt::format("{:016x}", model.hash()),
                "'{}': the recorded hash does not match the alphabet and merges (edited or corrupt file)", name);
    }
    check_recorded_layout(json, model, name);
    return model;
  } catch (const nlohmann::json::exception& error) {
    fail("'{}' is not a valid BPE model: {}", name, error.what());
  }
}

std::string BpeModel::to_huggingface_json() const {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (std::size_t id = 0; id < texts_.size(); ++id) vocab[texts_[id]] = id;
  auto merges = nlohmann::ordered_json::array();
  for (auto [left, right] : merges_) merges.push_back(texts_[left] + " " + texts_[right]);
  auto added = nlohmann::ordered_json::array();
  for (TokenId id = 0; id < first_byte_id; ++id) {
    added.push_back({{"id", id},
                     {"content", texts_[id]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  nlohmann::ordered_json json;
  json["version"] = "1.0";
  json["truncation"] = nullptr;
  json["padding"] = nullptr;
  json["added_tokens"] = std::move(added);
  json["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", whitespace_marker_utf8}};
  // agf-split-v1 as a regular expression over the normalized text (space already replaced by ▁).
  json["pre_tokenizer"] = {
      {"type", "Split"},
      {"pattern",
       {{"Regex",
         "\u2581?(?:\\p{L}|\\p{M})+|\u2581?[0-9]+|\u2581?[\\p{P}\\p{S}&&[^\u2581]]+|\u2581?[^\\p{L}\\p{M}\\p{P}\\p{S}0-9\u2581]+|\u2581"}}},
      {"behavior", "Isolated"},
      {"invert", false}};
  json["post_processor"] = nullptr;
  json["decoder"] = {{"type", "Sequence"},
                     {"decoders",
                      {{{"type", "Replace"}, {"pattern", {{"String", whitespace_marker_utf8}}}, {"content", " "}},
                       {{"type", "ByteFallback"}},
                       {{"type", "Fuse"}}}}};
  json["model"] = {{"type", "BPE"},
                   {"dropout", nullptr},
                   {"unk_token", "<unk>"},
                   {"continuing_subword_prefix", nullptr},
                   {"end_of_word_suffix", nullptr},
                   {"fuse_unk", false},
                   {"byte_fallback", true},
                   {"vocab", std::move(vocab)},
                   {"merges", std::move(merges)}};
  return json.dump(1) + "\n";
}

}  // namespace agf::data
