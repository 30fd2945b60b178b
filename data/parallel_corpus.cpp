#include "data/parallel_corpus.h"

#include "core/error.h"
#include "data/entities.h"
#include "data/line_checks.h"
#include "data/text_file.h"
#include "data/utf8.h"

namespace agf::data {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

// Where one side of a pair comes from, for messages: its file, line, and the byte of the line it starts at
// (the target column of a TSV line), or "segment" for the text of an .sgm segment.
struct SideOrigin {
  const std::string& file;
  std::size_t line;
  std::size_t offset = 0;
  std::string_view unit = "line";
};

// Keeps pair i when both sides are valid UTF-8; otherwise skips it (skip_invalid) or throws naming the
// file, line and byte of the bad side.
void add_checked_pair(ParallelCorpus& corpus, std::string source, std::string target, const SideOrigin& source_origin,
                      const SideOrigin& target_origin, const ReadOptions& options, ReadReport& report) {
  if (options.skip_invalid) {
    if (!is_valid_utf8(source) || !is_valid_utf8(target)) {
      ++report.invalid_skipped;
      return;
    }
  } else {
    require_utf8(source, source_origin.file, source_origin.line, source_origin.offset, source_origin.unit);
    require_utf8(target, target_origin.file, target_origin.line, target_origin.offset, target_origin.unit);
  }
  corpus.source.push_back(std::move(source));
  corpus.target.push_back(std::move(target));
}

}  // namespace

CorpusFormat guess_format(const std::string& path) {
  std::string name = path;
  if (ends_with(name, ".xz")) name.resize(name.size() - 3);
  if (ends_with(name, ".sgm")) return CorpusFormat::sgm;
  if (ends_with(name, ".tsv")) return CorpusFormat::tsv;
  return CorpusFormat::plain;
}

CorpusFormat parse_format(const std::string& name) {
  if (name == "plain") return CorpusFormat::plain;
  if (name == "tsv") return CorpusFormat::tsv;
  if (name == "sgm") return CorpusFormat::sgm;
  fail("unknown corpus format '{}' (expected plain, tsv or sgm)", name);
}

ParallelCorpus read_plain(const std::string& source_path, const std::string& target_path, const ReadOptions& options,
                          ReadReport* report_out) {
  std::vector<std::string> source = read_lines(source_path);
  std::vector<std::string> target = read_lines(target_path);
  AGF_CHECK(source.size() == target.size(),
            "parallel files differ in length: '{}' has {} lines but '{}' has {} lines; line i of one must translate "
            "line i of the other",
            source_path, source.size(), target_path, target.size());
  ReadReport report;
  ParallelCorpus corpus;
  corpus.source.reserve(source.size());
  corpus.target.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    add_checked_pair(corpus, std::move(source[i]), std::move(target[i]), {source_path, i + 1}, {target_path, i + 1},
                     options, report);
  }
  report.pairs = corpus.size();
  if (report_out) *report_out = report;
  return corpus;
}

ParallelCorpus read_tsv(const std::string& path, const ReadOptions& options, ReadReport* report_out) {
  std::vector<std::string> lines = read_lines(path);
  ReadReport report;
  ParallelCorpus corpus;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::size_t tab = line.find('\t');
    AGF_CHECK(tab != std::string::npos, "{}:{}: a TSV line needs two columns (source<TAB>target) but has no tab", path,
              i + 1);
    AGF_CHECK(line.find('\t', tab + 1) == std::string::npos,
              "{}:{}: a TSV line needs exactly two columns but has more than one tab", path, i + 1);
    add_checked_pair(corpus, line.substr(0, tab), line.substr(tab + 1), {path, i + 1}, {path, i + 1, tab + 1}, options,
                     report);
  }
  report.pairs = corpus.size();
  if (report_out) *report_out = report;
  return corpus;
}

std::vector<std::string> read_sgm_segments(const std::string& path, std::vector<std::size_t>* source_lines) {
  const std::vector<std::string> lines = read_lines(path);
  std::vector<std::string> segments;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::size_t open = line.find("<seg");
    if (open == std::string::npos) continue;
    const std::size_t open_end = line.find('>', open);
    const std::size_t close = line.rfind("</seg>");
    AGF_CHECK(open_end != std::string::npos && close != std::string::npos && close > open_end,
              "{}:{}: malformed segment: expected <seg ...>text</seg> on one line", path, i + 1);
    segments.push_back(decode_entities(trim(std::string_view(line).substr(open_end + 1, close - open_end - 1))));
    if (source_lines) source_lines->push_back(i + 1);
  }
  AGF_CHECK(!segments.empty(), "'{}' holds no <seg> elements: is it a WMT .sgm file?", path);
  return segments;
}

ParallelCorpus read_sgm(const std::string& source_path, const std::string& target_path, const ReadOptions& options,
                        ReadReport* report_out) {
  std::vector<std::size_t> source_lines, target_lines;
  std::vector<std::string> source = read_sgm_segments(source_path, &source_lines);
  std::vector<std::string> target = read_sgm_segments(target_path, &target_lines);
  AGF_CHECK(source.size() == target.size(),
            "parallel files differ in length: '{}' has {} segments but '{}' has {} segments", source_path,
            source.size(), target_path, target.size());
  ReadReport report;
  ParallelCorpus corpus;
  for (std::size_t i = 0; i < source.size(); ++i) {
    // The segments' text, entities decoded and trimmed: a byte counts in the segment, not in the line.
    add_checked_pair(corpus, std::move(source[i]), std::move(target[i]), {source_path, source_lines[i], 0, "segment"},
                     {target_path, target_lines[i], 0, "segment"}, options, report);
  }
  report.pairs = corpus.size();
  if (report_out) *report_out = report;
  return corpus;
}

ParallelCorpus read_parallel(CorpusFormat format, const std::string& source_path, const std::string& target_path,
                             const ReadOptions& options, ReadReport* report) {
  switch (format) {
    case CorpusFormat::tsv: return read_tsv(source_path, options, report);
    case CorpusFormat::sgm: return read_sgm(source_path, target_path, options, report);
    default: return read_plain(source_path, target_path, options, report);
  }
}

}  // namespace agf::data
