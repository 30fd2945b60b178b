#include "data/prepare_dataset.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/bpe_codec.h"
#include "data/text_file.h"
#include "data/token_dataset.h"

namespace agf::data {

std::vector<SplitReport> prepare_dataset(const std::vector<SplitFiles>& splits, const std::string& model_path,
                                         const std::string& out_dir, const PrepareOptions& options) {
  AGF_CHECK(options.max_length > 0, "corpus prepare: --max-length must be positive");
  AGF_CHECK(options.test_max_length.value_or(1) > 0, "corpus prepare: --test-max-length must be positive");
  const BpeModel model = BpeModel::load(model_path);
  const BpeCodec codec(model);
  std::filesystem::create_directories(out_dir);
  std::vector<SplitReport> reports;
  nlohmann::ordered_json summary;
  summary["bpe"] = "bpe.json";
  summary["vocab_hash"] = fmt::format("{:016x}", model.hash());
  summary["vocab_size"] = model.vocab_size();
  summary["max_length"] = options.max_length;
  for (const SplitFiles& split : splits) {
    SplitReport report;
    report.name = split.name;
    report.max_length = split.name == "test" ? options.test_max_length.value_or(options.max_length)
                                             : options.max_length;
    ReadOptions read_options;
    read_options.skip_invalid = options.skip_invalid;
    ReadReport read_report;
    const ParallelCorpus corpus = read_parallel(split.format, split.source, split.target, read_options, &read_report);
    report.read = corpus.size() + read_report.invalid_skipped;
    report.invalid_skipped = read_report.invalid_skipped;

    std::vector<std::string_view> sources, targets;
    for (std::size_t i = 0; i < corpus.size(); ++i) {
      if (corpus.source[i].empty() || corpus.target[i].empty()) {
        ++report.empty_dropped;
        continue;
      }
      sources.push_back(corpus.source[i]);
      targets.push_back(corpus.target[i]);
    }
    auto source_ids = codec.encode_lines(sources);
    auto target_ids = codec.encode_lines(targets);
    TokenPairs pairs;
    for (std::size_t i = 0; i < source_ids.size(); ++i) {
      if (source_ids[i].size() > report.max_length || target_ids[i].size() > report.max_length) {
        ++report.too_long_dropped;
        continue;
      }
      report.source_tokens += source_ids[i].size();
      report.target_tokens += target_ids[i].size();
      pairs.source.push_back(std::move(source_ids[i]));
      pairs.target.push_back(std::move(target_ids[i]));
    }
    report.kept = pairs.source.size();
    write_token_dataset((std::filesystem::path(out_dir) / (split.name + ".bin")).string(), pairs, model.hash(),
                        model.vocab_size());
    summary["splits"][split.name] = {{"source", split.source},
                                     {"target", split.target},
                                     {"read", report.read},
                                     {"invalid_utf8_skipped", report.invalid_skipped},
                                     {"empty_dropped", report.empty_dropped},
                                     {"max_length", report.max_length},
                                     {"too_long_dropped", report.too_long_dropped},
                                     {"kept", report.kept},
                                     {"source_tokens", report.source_tokens},
                                     {"target_tokens", report.target_tokens}};
    reports.push_back(report);
  }
  model.save((std::filesystem::path(out_dir) / "bpe.json").string());
  write_file((std::filesystem::path(out_dir) / "prepare.json").string(), summary.dump(1) + "\n");
  return reports;
}

}  // namespace agf::data
