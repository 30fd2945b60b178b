// `agf bpe learn|encode|decode`: the BPE tokenizer on the command line (data/bpe_*.h).
//   agf bpe learn --input FILE [FILE...] --vocab-size N --output MODEL
//   agf bpe encode --model MODEL [--ids]     stdin -> stdout, one line per line
//   agf bpe decode --model MODEL [--ids]
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/bpe_codec.h"
#include "data/bpe_learn.h"
#include "data/line_checks.h"
#include "data/text_file.h"
#include "data/utf8.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"

namespace {

using namespace agf::data;

std::string read_stdin() {
  std::string content;
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) content.append(buffer, got);
  return content;
}

void write_stdout(const std::string& text) {
  AGF_CHECK(std::fwrite(text.data(), 1, text.size(), stdout) == text.size(), "error writing to stdout");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct LearnArgs {
  std::vector<std::string> inputs;
  std::size_t vocab_size = 8000;
  double coverage = 0.9999;
  std::uint64_t min_frequency = 2;
  std::string output;
  std::string huggingface_output;
  bool skip_invalid = false;
};

void learn(const LearnArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> contents;
  std::vector<std::string_view> lines;
  std::size_t skipped = 0;
  for (const auto& path : args.inputs) {
    contents.push_back(read_file(path));
  }
  for (std::size_t f = 0; f < contents.size(); ++f) {
    std::size_t line_number = 0;
    for (std::string_view line : split_lines(contents[f])) {
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (args.skip_invalid && !is_valid_utf8(line)) {
        ++skipped;
        continue;
      }
      require_utf8(line, args.inputs[f], line_number);
      lines.push_back(line);
    }
  }
  BpeLearnOptions options;
  options.vocab_size = args.vocab_size;
  options.character_coverage = args.coverage;
  options.min_frequency = args.min_frequency;
  const BpeModel model = learn_bpe(lines, options);
  model.save(args.output);
  if (!args.huggingface_output.empty()) write_file(args.huggingface_output, model.to_huggingface_json());
  fmt::print(stderr, "bpe learn: {} lines{}, alphabet {}, {} merges, vocabulary {} -> {} ({:.2f} s)\n", lines.size(),
             skipped ? fmt::format(" ({} with invalid UTF-8 skipped)", skipped) : "", model.alphabet().size(),
             model.merges().size(), model.vocab_size(), args.output, seconds_since(start));
  if (model.vocab_size() < args.vocab_size) {
    fmt::print(stderr,
               "bpe learn: note: no pair occurs {} times or more after {} merges, so the vocabulary "
               "stops at {} of the {} asked\n",
               args.min_frequency, model.merges().size(), model.vocab_size(), args.vocab_size);
  }
}

// Encodes stdin in blocks of lines so that memory stays bounded on large inputs.
void encode(const std::string& model_path, bool print_ids) {
  const BpeModel model = BpeModel::load(model_path);
  const BpeCodec codec(model);
  const std::string input = read_stdin();
  const std::vector<std::string_view> lines = split_lines(input);
  constexpr std::size_t block = 1 << 16;
  std::string out;
  for (std::size_t begin = 0; begin < lines.size(); begin += block) {
    const std::size_t end = std::min(lines.size(), begin + block);
    std::vector<std::string_view> chunk(lines.begin() + begin, lines.begin() + end);
    for (std::size_t i = 0; i < chunk.size(); ++i) require_utf8(chunk[i], "<stdin>", begin + i + 1);
    const auto encoded = codec.encode_lines(chunk);
    out.clear();
    for (const auto& ids : encoded) {
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (k) out.push_back(' ');
        if (print_ids) {
          char digits[16];
          auto result = std::to_chars(digits, digits + sizeof digits, ids[k]);
          out.append(digits, result.ptr);
        } else {
          out += model.text(ids[k]);
        }
      }
      out.push_back('\n');
    }
    write_stdout(out);
  }
}

void decode(const std::string& model_path, bool read_ids) {
  const BpeModel model = BpeModel::load(model_path);
  const BpeCodec codec(model);
  const std::string input = read_stdin();
  std::string out;
  std::vector<TokenId> ids;
  std::size_t line_number = 0;
  for (std::string_view line : split_lines(input)) {
    ++line_number;
    ids.clear();
    std::size_t start = 0;
    while (start <= line.size()) {
      std::size_t end = line.find(' ', start);
      if (end == std::string_view::npos) end = line.size();
      const std::string_view item = line.substr(start, end - start);
      if (!item.empty()) {
        if (read_ids) {
          TokenId id = -1;
          auto result = std::from_chars(item.data(), item.data() + item.size(), id);
          AGF_CHECK(result.ec == std::errc() && result.ptr == item.data() + item.size() && id >= 0 &&
                        static_cast<std::size_t>(id) < model.vocab_size(),
                    "<stdin>:{}: '{}' is not a token id of this model (0..{})", line_number, item,
                    model.vocab_size() - 1);
          ids.push_back(id);
        } else {
          const TokenId id = model.id_of_text(std::string(item));
          AGF_CHECK(id >= 0, "<stdin>:{}: '{}' is not a token of this model", line_number, item);
          ids.push_back(id);
        }
      }
      start = end + 1;
    }
    out += codec.decode(ids);
    out.push_back('\n');
    if (out.size() > (1u << 20)) {
      write_stdout(out);
      out.clear();
    }
  }
  write_stdout(out);
}

agf::cli::Registration registration{
    "bpe", "BPE tokenizer: learn, encode, decode", [](CLI::App& command) {
      command.require_subcommand(1);
      auto* learn_command = command.add_subcommand("learn", "learn a joint BPE model from text files");
      auto learn_args = std::make_shared<LearnArgs>();
      learn_command
          ->add_option("--input", learn_args->inputs, "text files, one sentence a line (xz read transparently)")
          ->required()
          ->check(CLI::ExistingFile);
      learn_command
          ->add_option("--vocab-size", learn_args->vocab_size, "vocabulary size, specials and 256 byte tokens included")
          ->capture_default_str()
          ->check(agf::cli::positive_number());
      learn_command->add_option("--output", learn_args->output, "model file to write (JSON)")->required();
      learn_command
          ->add_option("--character-coverage", learn_args->coverage,
                       "share of character occurrences the alphabet must cover; rarer characters use byte tokens")
          ->capture_default_str()
          ->check(agf::cli::number_between(0.0, 1.0));
      learn_command->add_option("--min-frequency", learn_args->min_frequency, "stop when no pair occurs this often")
          ->capture_default_str()
          ->check(agf::cli::non_negative_number());
      learn_command->add_option("--huggingface", learn_args->huggingface_output,
                                "also write a Hugging Face tokenizer.json here");
      learn_command->add_flag("--skip-invalid", learn_args->skip_invalid,
                              "skip lines that are not valid UTF-8 (default: error)");
      learn_command->callback([learn_args] { learn(*learn_args); });

      for (const bool encoding : {true, false}) {
        auto* sub = command.add_subcommand(encoding ? "encode" : "decode",
                                           encoding ? "text (stdin) -> tokens (stdout), one line per line"
                                                    : "tokens (stdin) -> text (stdout), one line per line");
        auto model_path = std::make_shared<std::string>();
        auto ids = std::make_shared<bool>(false);
        sub->add_option("--model", *model_path, "BPE model (JSON) from `agf bpe learn`")
            ->required()
            ->check(CLI::ExistingFile);
        sub->add_flag("--ids", *ids,
                      encoding ? "print token ids instead of token texts" : "read token ids instead of token texts");
        sub->callback([=] {
          if (encoding) encode(*model_path, *ids);
          else decode(*model_path, *ids);
        });
      }
    }};

}  // namespace
