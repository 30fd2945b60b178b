// BPE: hand-checked merges on tiny corpora, the id layout, JSON round trip, and decode(encode(x)) == x
// on random Unicode.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/bpe_codec.h"
#include "data/bpe_learn.h"
#include "data/pretokenizer.h"
#include "data/utf8.h"

using namespace agf::data;

namespace {
std::vector<std::string_view> views(const std::vector<std::string>& lines) { return {lines.begin(), lines.end()}; }
std::vector<std::string> merge_texts(const BpeModel& model) {
  std::vector<std::string> texts;
  for (auto [left, right] : model.merges()) texts.push_back(model.text(left) + "+" + model.text(right));
  return texts;
}
}  // namespace

TEST_CASE("pre-tokenizer cuts before spaces and at class changes, losslessly", "[data][bpe]") {
  CHECK(split_words("Hello, world!") == std::vector<std::string_view>{"Hello", ",", " world", "!"});
  CHECK(split_words("a  b 42€") == std::vector<std::string_view>{"a", " ", " b", " 42", "€"});
  CHECK(split_words(" ") == std::vector<std::string_view>{" "});
  CHECK(split_words("").empty());
  CHECK(split_words("Straße\tx") == std::vector<std::string_view>{"Straße", "\t", "x"});
  // a combining mark stays with its letter
  CHECK(split_words("e\xCC\x81t\xC3\xA9") == std::vector<std::string_view>{"e\xCC\x81t\xC3\xA9"});
}

TEST_CASE("BPE learns the hand-checked merges of a tiny corpus", "[data][bpe]") {
  // Words: "low" x5, " low" ... computed by hand below. Corpus lines:
  const std::vector<std::string> lines = {"aaab", "aaab", "ab"};
  // words: "aaab" x2, "ab" x1. Pairs: (a,a) 2*2=4, (a,b) 2+1=3.
  // merge 1: a+a (count 4). Words: [aa a b] x2, [a b]. Pairs: (aa,a) 2, (a,b) 3.
  // merge 2: a+b (count 3). Words: [aa ab] x2, [ab]. Pairs: (aa,ab) 2.
  // merge 3: aa+ab (count 2). Then nothing reaches min_frequency 2.
  BpeLearnOptions options;
  options.vocab_size = 1000;
  const BpeModel model = learn_bpe(views(lines), options);
  CHECK(model.alphabet() == std::vector<char32_t>{U'a', U'b'});  // a: 7 occurrences, b: 3
  CHECK(merge_texts(model) == std::vector<std::string>{"a+a", "a+b", "aa+ab"});
  const BpeCodec codec(model);
  // the space never occurred in training, so it is not in the alphabet: it falls back to its byte
  CHECK(codec.to_texts(codec.encode("aaab ab")) == std::vector<std::string>{"aaab", "<0x20>", "ab"});
  CHECK(codec.to_texts(codec.encode("aaaa")) == std::vector<std::string>{"aa", "aa"});
}

TEST_CASE("BPE tie rule: equal counts merge the pair with the smaller texts first", "[data][bpe]") {
  // "xy" and "ab" both occur 3 times; "a"<"x", so a+b is merged first, then x+y.
  const std::vector<std::string> lines = {"xy ab", "ab xy", "xy ab"};
  BpeLearnOptions options;
  options.vocab_size = 1000;
  const BpeModel model = learn_bpe(views(lines), options);
  const auto merges = merge_texts(model);
  REQUIRE(merges.size() >= 2);
  // words: "xy" 2, " ab" 2, "ab" 1, " xy" 1 -> pairs (a,b) 3, (x,y) 3, (▁,a) 2, (▁,x) 1
  CHECK(merges[0] == "a+b");
  CHECK(merges[1] == "x+y");
  CHECK(merges[2] == "▁+ab");
}

TEST_CASE("BPE overlapping runs are counted and merged correctly", "[data][bpe]") {
  // "aaaa" x3: pairs (a,a) 3 per word -> 9. After a+a: [aa aa] -> (aa,aa) 3. After aa+aa: done.
  const std::vector<std::string> lines = {"aaaa", "aaaa", "aaaa"};
  BpeLearnOptions options;
  options.vocab_size = 1000;
  const BpeModel model = learn_bpe(views(lines), options);
  CHECK(merge_texts(model) == std::vector<std::string>{"a+a", "aa+aa"});
}

TEST_CASE("BPE id layout: specials, byte tokens, alphabet, merges", "[data][bpe]") {
  const std::vector<std::string> lines = {"the cat", "the hat"};
  BpeLearnOptions options;
  options.vocab_size = 270;
  options.min_frequency = 1;
  const BpeModel model = learn_bpe(views(lines), options);
  CHECK(model.text(pad_id) == "<pad>");
  CHECK(model.text(unk_id) == "<unk>");
  CHECK(model.text(bos_id) == "<s>");
  CHECK(model.text(eos_id) == "</s>");
  CHECK(model.text(4) == "<0x00>");
  CHECK(model.text(259) == "<0xFF>");
  CHECK(model.vocab_size() == 270);
  // character counts: t 4, h 3, a 2, e 2, space 2, c 1 (ties: smaller code point first; space is U+0020)
  CHECK(model.alphabet() == std::vector<char32_t>{U't', U'h', U' ', U'a', U'e', U'c'});
  CHECK(model.text(first_alphabet_id + 2) == "▁");
  // pairs with count 2: (a,t) (h,e) (t,h); the tie rule takes "a"+"t" first
  CHECK(model.text(model.first_merge_id()) == "at");
}

TEST_CASE("BPE never creates a token whose text equals a special token", "[data][bpe]") {
  std::vector<std::string> lines(20, "<s> </s> <0x41>");
  BpeLearnOptions options;
  options.vocab_size = 400;
  const BpeModel model = learn_bpe(views(lines), options);
  for (std::size_t id = first_alphabet_id; id < model.vocab_size(); ++id) {
    CHECK(model.id_of_text(model.text(static_cast<TokenId>(id))) == static_cast<TokenId>(id));
  }
  const BpeCodec codec(model);
  const auto ids = codec.encode("<s>");
  CHECK(ids.size() > 1);
  CHECK(codec.decode(ids) == "<s>");
}

TEST_CASE("BPE falls back to bytes for unseen characters and literal markers", "[data][bpe]") {
  const std::vector<std::string> lines = {"abc abc", "abc"};
  BpeLearnOptions options;
  options.vocab_size = 300;
  const BpeModel model = learn_bpe(views(lines), options);
  const BpeCodec codec(model);
  const std::string text = "abc \xE2\x96\x81 \xF0\x9F\x98\x80";  // literal ▁ and an emoji
  const auto ids = codec.encode(text);
  CHECK(codec.to_texts(ids) == std::vector<std::string>{"abc", "▁", "<0xE2>", "<0x96>", "<0x81>", "▁", "<0xF0>",
                                                        "<0x9F>", "<0x98>", "<0x80>"});
  CHECK(codec.decode(ids) == text);
}

TEST_CASE("BPE model survives a JSON round trip and checks its hash", "[data][bpe]") {
  const std::vector<std::string> lines = {"Übergrößenträger gehen über die Straße", "the quick brown fox",
                                          "emoji 😀 ok"};
  BpeLearnOptions options;
  options.vocab_size = 320;
  options.min_frequency = 1;
  const BpeModel model = learn_bpe(views(lines), options);
  const BpeModel again = BpeModel::from_json(model.to_json(), "memory");
  CHECK(again.hash() == model.hash());
  CHECK(again.vocab_size() == model.vocab_size());
  CHECK(again.to_json() == model.to_json());
  // dropping the last merge changes the model, which the recorded hash catches
  auto edited = nlohmann::json::parse(model.to_json());
  REQUIRE(!edited["merges"].empty());
  edited["merges"].erase(edited["merges"].size() - 1);
  CHECK_THROWS_WITH(BpeModel::from_json(edited.dump(), "edited.json"), Catch::Contains("hash"));
  CHECK_THROWS_AS(BpeModel::from_json("{not json", "bad.json"), agf::Error);
  CHECK_THROWS_WITH(BpeModel::from_json("{\"format\": \"other\"}", "bad.json"), Catch::Contains("bad.json"));
}

TEST_CASE("BPE model fields that describe the layout and size must match the model, not be ignored", "[data][bpe]") {
  const std::vector<std::string> lines = {"the quick brown fox", "jumps over the lazy dog"};
  BpeLearnOptions options;
  options.vocab_size = 300;
  options.min_frequency = 1;
  const BpeModel model = learn_bpe(views(lines), options);
  auto refused = [&](const std::string& pointer, const nlohmann::json& value) {
    auto edited = nlohmann::json::parse(model.to_json());
    edited[nlohmann::json::json_pointer(pointer)] = value;
    try {
      BpeModel::from_json(edited.dump(), "edited.json");
    } catch (const agf::Error& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused("/vocab_size", 9000), Catch::Contains("edited.json") &&
                                               Catch::Contains("\"vocab_size\" is 9000") &&
                                               Catch::Contains(fmt::format("the model has {}", model.vocab_size())));
  CHECK_THAT(refused("/byte_fallback/count", 300), Catch::Contains("\"byte_fallback/count\" is 300"));
  CHECK_THAT(refused("/byte_fallback/first_id", 5), Catch::Contains("\"byte_fallback/first_id\" is 5"));
  CHECK_THAT(refused("/first_alphabet_id", 300), Catch::Contains("\"first_alphabet_id\" is 300"));
  CHECK_THAT(refused("/special_tokens/<unk>", 7), Catch::Contains("\"special_tokens\""));
  CHECK_THAT(refused("/pretokenizer", "whitespace"), Catch::Contains("\"pretokenizer\""));
  // The fields are descriptive: a model without them loads.
  auto bare = nlohmann::json::parse(model.to_json());
  for (const char* field : {"vocab_size", "byte_fallback", "first_alphabet_id", "special_tokens"}) bare.erase(field);
  CHECK(BpeModel::from_json(bare.dump(), "bare.json").hash() == model.hash());
}

namespace {
// Random valid UTF-8: ASCII (controls included), Latin letters with combining marks, CJK, emoji
// (with ZWJ and skin tones), spaces of all kinds, the literal marker, and empty lines.
std::string random_line(std::mt19937& rng) {
  static const std::vector<char32_t> pool = {U'a',   U'b',    U'e',     U'n',    U'r',   U't',   U' ',   U' ',   U' ',
                                             U'\t',  U'\r',   0x01,     0x1F,    0x7F,   U'.',   U',',   U'!',   U'0',
                                             U'7',   0x0301,  0x0308,   0x00E9,  0x00DF, 0x00FC, 0x4E2D, 0x6587, 0x5B57,
                                             0x3002, 0x1F600, 0x1F44D,  0x1F3FD, 0x200D, 0x2764, 0xFE0F, 0x00A0, 0x2003,
                                             0x2581, 0xFEFF,  0x10FFFF, 0xE000,  0x0627, 0x05D0, 0x0915, 0x093F};
  std::uniform_int_distribution<std::size_t> length(0, 40), pick(0, pool.size() - 1);
  std::string line;
  const std::size_t n = length(rng) < 4 ? 0 : length(rng);
  for (std::size_t i = 0; i < n; ++i) append_utf8(line, pool[pick(rng)]);
  return line;
}
}  // namespace

TEST_CASE("decode(encode(x)) == x byte for byte on random Unicode", "[data][bpe]") {
  std::mt19937 rng(1234);
  std::vector<std::string> corpus;
  for (int i = 0; i < 400; ++i) corpus.push_back(random_line(rng));
  BpeLearnOptions options;
  options.vocab_size = 400;
  options.character_coverage = 0.9;  // leave some characters to byte fallback
  const BpeModel model = learn_bpe(views(corpus), options);
  CHECK(model.merges().size() > 0);
  const BpeCodec codec(model);
  std::vector<std::string> tests;
  for (int i = 0; i < 2000; ++i) tests.push_back(random_line(rng));
  tests.push_back("");
  tests.push_back("   ");
  tests.push_back("\xF4\x8F\xBF\xBF");
  const auto encoded = codec.encode_lines(views(tests));
  for (std::size_t i = 0; i < tests.size(); ++i) {
    REQUIRE(codec.decode(encoded[i]) == tests[i]);
    REQUIRE(encoded[i] == codec.encode(tests[i]));  // the threaded path agrees with the serial one
    for (TokenId id : encoded[i]) REQUIRE(id >= first_byte_id);
  }
}

TEST_CASE("UTF-8 validation rejects overlongs, surrogates, truncation and out-of-range values", "[data][utf8]") {
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));
  CHECK(find_invalid_utf8("ab\xC0\x80") == 2u);        // overlong NUL
  CHECK(find_invalid_utf8("\xED\xA0\x80") == 0u);      // surrogate D800
  CHECK(find_invalid_utf8("x\xE2\x82") == 1u);         // truncated
  CHECK(find_invalid_utf8("\xF4\x90\x80\x80") == 0u);  // above U+10FFFF
  CHECK(find_invalid_utf8("\x80") == 0u);              // lone continuation
  CHECK(find_invalid_utf8("\xFF") == 0u);
}

namespace {
// The textbook algorithm, for comparison: recount every pair of every word before each merge.
std::vector<std::pair<std::string, std::string>> naive_merges(const std::vector<std::string>& lines,
                                                              const BpeModel& base, std::size_t merges_wanted) {
  std::map<std::string, std::uint64_t> counts;
  for (const auto& line : lines) {
    for (auto word : split_words(line)) ++counts[std::string(word)];
  }
  std::vector<std::pair<std::vector<std::string>, std::uint64_t>> words;
  for (const auto& [word, n] : counts) {
    std::vector<std::string> symbols;
    std::size_t position = 0;
    while (position < word.size()) {
      const char32_t c = decode_utf8(word, position);
      const TokenId id = base.id_of_char(c);
      symbols.push_back(id >= 0 ? base.text(id) : std::string());  // "" = outside the alphabet
    }
    words.emplace_back(std::move(symbols), n);
  }
  std::vector<std::pair<std::string, std::string>> merges;
  while (merges.size() < merges_wanted) {
    std::map<std::pair<std::string, std::string>, std::uint64_t> pairs;  // ordered: ties -> smaller texts
    for (const auto& [symbols, n] : words) {
      for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
        if (!symbols[i].empty() && !symbols[i + 1].empty()) pairs[{symbols[i], symbols[i + 1]}] += n;
      }
    }
    std::pair<std::string, std::string> best;
    std::uint64_t best_count = 0;
    for (const auto& [pair, n] : pairs) {
      if (n > best_count) best = pair, best_count = n;
    }
    if (best_count < 2) break;
    merges.push_back(best);
    for (auto& [symbols, n] : words) {
      std::vector<std::string> merged;
      for (std::size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == best.first && symbols[i + 1] == best.second) {
          merged.push_back(best.first + best.second);
          ++i;
        } else {
          merged.push_back(symbols[i]);
        }
      }
      symbols = std::move(merged);
    }
  }
  return merges;
}
}  // namespace

TEST_CASE("incremental BPE learning gives exactly the merges of full recounting", "[data][bpe]") {
  std::mt19937 rng(77);
  const std::vector<std::string> syllables = {"ba", "na", "an", "aa", "b", "n", "ab", "ß", "ä", "é", " ", " ", "."};
  std::vector<std::string> lines;
  for (int i = 0; i < 300; ++i) {
    std::string line;
    const int length = static_cast<int>(rng() % 12);
    for (int k = 0; k < length; ++k) line += syllables[rng() % syllables.size()];
    lines.push_back(line);
  }
  BpeLearnOptions options;
  options.vocab_size = 260 + 8 + 150;
  options.character_coverage = 0.9;  // drops the rarest characters: they must act as barriers
  const BpeModel model = learn_bpe(views(lines), options);
  CHECK(model.alphabet().size() < 8);  // of the 8 characters, the rarest are left to byte fallback
  const BpeModel base(model.alphabet(), {});
  const auto expected = naive_merges(lines, base, model.merges().size() + 1);
  std::vector<std::pair<std::string, std::string>> got;
  for (auto [left, right] : model.merges()) got.emplace_back(model.text(left), model.text(right));
  // the naive run may find one more merge only if the vocabulary size stopped the real one
  REQUIRE(got.size() > 30);
  REQUIRE(expected.size() >= got.size());
  CHECK(std::vector(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(got.size())) == got);
  if (model.vocab_size() < options.vocab_size) CHECK(expected.size() == got.size());
}
