// `agf corpus build|prepare`: make a parallel corpus; binarize one with a BPE model.
//   agf corpus build libreoffice-help --out DIR [--from TREE] [--seed N] [--xz]
//   agf corpus prepare --train-src F --train-tgt F --valid-src F --valid-tgt F [--test-src F --test-tgt F]
//                      --bpe MODEL --out DIR
#include <fmt/format.h>

#include <tuple>

#include "core/error.h"
#include "data/libreoffice_help_corpus.h"
#include "data/prepare_dataset.h"
#include "tools/agf/command.h"
#include "tools/agf/flag_checks.h"

namespace {

using namespace agf::data;

void build(const std::string& name, const LibreOfficeHelpOptions& options) {
  AGF_CHECK(name == "libreoffice-help", "corpus build: unknown corpus '{}' (known: libreoffice-help)", name);
  const LibreOfficeHelpReport report = build_libreoffice_help(options);
  fmt::print(stderr,
             "corpus build: {} pages, {} id pairs; dropped {} empty, {} identical, {} invalid UTF-8, {} duplicate\n"
             "corpus build: {} pairs ({} + {} words): train {}, valid {}, test {} -> {}\n",
             report.pages, report.pairs_found, report.dropped_empty, report.dropped_identical, report.dropped_invalid,
             report.dropped_duplicate, report.pairs, report.words_en, report.words_de, report.train, report.valid,
             report.test, options.out);
}

void add_build(CLI::App& corpus) {
  auto* command = corpus.add_subcommand("build",
                                        "build a bundled corpus (libreoffice-help: Debian's LibreOffice help, en-de)");
  auto name = std::make_shared<std::string>();
  auto options = std::make_shared<LibreOfficeHelpOptions>();
  command->add_option("name", *name, "corpus to build: libreoffice-help")->required();
  command->add_option("--out", options->out, "output directory")->required();
  command
      ->add_option("--from", options->from,
                   "already unpacked packages (a tree with usr/share/libreoffice/help); default: apt-get download")
      ->check(CLI::ExistingDirectory);
  command->add_option("--seed", options->seed, "seed of the split shuffle")->capture_default_str();
  command->add_option("--valid-size", options->valid_size, "pairs in the validation split")
      ->capture_default_str()
      ->check(agf::cli::non_negative_number());
  command->add_option("--test-size", options->test_size, "pairs in the test split")
      ->capture_default_str()
      ->check(agf::cli::non_negative_number());
  command->add_flag("--xz", options->compress_xz, "write the splits xz-compressed (*.xz)");
  command->callback([=] { build(*name, *options); });
}

struct PrepareArgs {
  std::string train_source, train_target, valid_source, valid_target, test_source, test_target, model, out,
      format = "auto";
  PrepareOptions options;
};

void prepare(const PrepareArgs& args) {
  auto format_of = [&](const std::string& path) {
    return args.format == "auto" ? guess_format(path) : parse_format(args.format);
  };
  std::vector<SplitFiles> splits;
  for (const auto& [name, source, target] : {std::tuple{"train", args.train_source, args.train_target},
                                             std::tuple{"valid", args.valid_source, args.valid_target},
                                             std::tuple{"test", args.test_source, args.test_target}}) {
    if (source.empty()) continue;
    const CorpusFormat format = format_of(source);
    AGF_CHECK(format == CorpusFormat::tsv || !target.empty(),
              "corpus prepare: --{}-src is given without --{}-tgt (only a .tsv file holds both sides)", name, name);
    if (format == CorpusFormat::tsv && !target.empty()) {
      throw CLI::ValidationError(fmt::format("--{}-tgt", name), fmt::format("not used with a .tsv --{}-src, which "
                                                                            "holds both sides ({})",
                                                                            name, source));
    }
    splits.push_back({name, source, target, format});
  }
  const auto reports = prepare_dataset(splits, args.model, args.out, args.options);
  for (const auto& report : reports) {
    fmt::print(stderr,
               "corpus prepare: {}: {} pairs read; dropped {} invalid UTF-8, {} with an empty side, {} longer than {} "
               "tokens; kept {} ({} + {} tokens) -> {}/{}.bin\n",
               report.name, report.read, report.invalid_skipped, report.empty_dropped, report.too_long_dropped,
               report.max_length, report.kept, report.source_tokens, report.target_tokens, args.out, report.name);
  }
}

void add_prepare(CLI::App& corpus) {
  auto* command = corpus.add_subcommand(
      "prepare", "encode parallel text with a BPE model into token datasets (OUT/train.bin, valid.bin, test.bin)");
  auto args = std::make_shared<PrepareArgs>();
  command->add_option("--train-src", args->train_source, "training source: text, .tsv (both sides) or .sgm")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--train-tgt", args->train_target, "training target (not with .tsv)")->check(CLI::ExistingFile);
  command->add_option("--valid-src", args->valid_source, "validation source")->check(CLI::ExistingFile);
  command->add_option("--valid-tgt", args->valid_target, "validation target")->check(CLI::ExistingFile);
  command->add_option("--test-src", args->test_source, "held-out test source (agf eval --split test)")
      ->check(CLI::ExistingFile);
  command->add_option("--test-tgt", args->test_target, "held-out test target")->check(CLI::ExistingFile);
  command->add_option("--bpe", args->model, "BPE model from `agf bpe learn`")->required()->check(CLI::ExistingFile);
  command->add_option("--out", args->out, "output directory")->required();
  command->add_option("--format", args->format, "plain, tsv, sgm, or auto (by file name)")
      ->check(CLI::IsMember({"auto", "plain", "tsv", "sgm"}))
      ->capture_default_str();
  command
      ->add_option("--max-length", args->options.max_length, "drop pairs with a side longer than this many BPE tokens")
      ->capture_default_str()
      ->check(agf::cli::positive_number());
  command
      ->add_option("--test-max-length", args->options.test_max_length,
                   "the test split's own bound (default: --max-length); a larger one keeps test pairs longer than "
                   "training sees, to test length extrapolation")
      ->check(agf::cli::positive_number());
  command->add_flag("--skip-invalid", args->options.skip_invalid, "drop pairs with invalid UTF-8 (default: error)");
  command->callback([args] { prepare(*args); });
}

agf::cli::Registration registration{"corpus", "make a parallel corpus; binarize text with a BPE model",
                                    [](CLI::App& command) {
                                      command.require_subcommand(1);
                                      add_build(command);
                                      add_prepare(command);
                                    }};

}  // namespace
