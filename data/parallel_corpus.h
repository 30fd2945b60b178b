#pragma once
// Readers for parallel (source, target) text, all UTF-8:
//   plain  two files, line i of one translates line i of the other
//   tsv    one file, "source<TAB>target" a line
//   sgm    WMT newstest: two files of <doc ...><seg id="N">text</seg>...</doc>, segments paired in order
// Files may be xz-compressed (text_file.h); a trailing '\r' is dropped from each line.
//
// Errors (agf::Error) name the file and line: a line-count mismatch names both files and both counts;
// invalid UTF-8 names file, line and byte, unless `skip_invalid`, which drops such pairs and counts them.
#include <string>
#include <vector>

namespace agf::data {

struct ParallelCorpus {
  std::vector<std::string> source;
  std::vector<std::string> target;
  std::size_t size() const { return source.size(); }
};

enum class CorpusFormat { plain, tsv, sgm };

struct ReadOptions {
  bool skip_invalid = false;
};

struct ReadReport {
  std::size_t pairs = 0;            // pairs returned
  std::size_t invalid_skipped = 0;  // pairs dropped for invalid UTF-8 (skip_invalid only)
};

// The format a file name suggests: ".sgm" -> sgm, ".tsv" -> tsv, else plain (".xz" is looked through).
CorpusFormat guess_format(const std::string& path);
CorpusFormat parse_format(const std::string& name);  // "plain" | "tsv" | "sgm" | "auto" needs a path

ParallelCorpus read_plain(const std::string& source_path, const std::string& target_path, const ReadOptions& options,
                          ReadReport* report = nullptr);
ParallelCorpus read_tsv(const std::string& path, const ReadOptions& options, ReadReport* report = nullptr);
ParallelCorpus read_sgm(const std::string& source_path, const std::string& target_path, const ReadOptions& options,
                        ReadReport* report = nullptr);

// Dispatches on `format`; `target_path` is ignored for tsv.
ParallelCorpus read_parallel(CorpusFormat format, const std::string& source_path, const std::string& target_path,
                             const ReadOptions& options, ReadReport* report = nullptr);

// The segments of one .sgm file, in order, entities decoded. `source_lines` gives the line each came
// from (for error messages).
std::vector<std::string> read_sgm_segments(const std::string& path, std::vector<std::size_t>* source_lines = nullptr);

}  // namespace agf::data
