// `agf corpus build|prepare`: make a parallel corpus; binarize one with a BPE model.
//   agf corpus build libreoffice-help --out DIR [--from TREE] [--seed N] [--xz]
//   agf corpus prepare --train-src F --train-tgt F --valid-src F --valid-tgt F --bpe MODEL --out DIR
#include <fmt/format.h>

#include "core/error.h"
#include "data/libreoffice_help_corpus.h"
#include "tools/agf/command.h"

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
  auto* command = corpus.add_subcommand("build", "build a bundled corpus (libreoffice-help: Debian's LibreOffice help, en-de)");
  auto name = std::make_shared<std::string>();
  auto options = std::make_shared<LibreOfficeHelpOptions>();
  command->add_option("name", *name, "corpus to build: libreoffice-help")->required();
  command->add_option("--out", options->out, "output directory")->required();
  command->add_option("--from", options->from,
                      "already unpacked packages (a tree with usr/share/libreoffice/help); default: apt-get download")
      ->check(CLI::ExistingDirectory);
  command->add_option("--seed", options->seed, "seed of the split shuffle")->capture_default_str();
  command->add_option("--valid-size", options->valid_size, "pairs in the validation split")->capture_default_str();
  command->add_option("--test-size", options->test_size, "pairs in the test split")->capture_default_str();
  command->add_flag("--xz", options->compress_xz, "write the splits xz-compressed (*.xz)");
  command->callback([=] { build(*name, *options); });
}

agf::cli::Registration registration{"corpus", "make a parallel corpus; binarize text with a BPE model",
                                    [](CLI::App& command) {
                                      command.require_subcommand(1);
                                      add_build(command);
                                    }};

}  // namespace
