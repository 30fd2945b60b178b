#include "data/libreoffice_help_corpus.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_set>

#include "core/error.h"
#include "data/html_text.h"
#include "data/seeded_shuffle.h"
#include "data/text_file.h"
#include "data/utf8.h"

namespace agf::data {

namespace fs = std::filesystem;

namespace {

constexpr const char* english_package = "libreoffice-help-en-us";
constexpr const char* german_package = "libreoffice-help-de";

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') quoted += "'\\''";
    else quoted += c;
  }
  return quoted + "'";
}

// Runs a shell command and returns its standard output; throws naming the command when it fails.
std::string run_command(const std::string& command) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  AGF_CHECK(pipe != nullptr, "cannot run '{}'", command);
  std::string output;
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, got);
  const int status = ::pclose(pipe);
  AGF_CHECK(status == 0, "command failed (status {}): {}", status, command);
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return output;
}

// Downloads both packages into `work` and unpacks them there; returns their versions.
std::string download_and_unpack(const fs::path& work) {
  const std::string dir = shell_quote(work.string());
  run_command(fmt::format("cd {} && apt-get download {} {} >&2", dir, english_package, german_package));
  std::string versions;
  for (const char* package : {english_package, german_package}) {
    std::string deb;
    for (const auto& entry : fs::directory_iterator(work)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(std::string(package) + "_", 0) == 0 && entry.path().extension() == ".deb")
        deb = entry.path().string();
    }
    AGF_CHECK(!deb.empty(), "apt-get download did not leave a {} .deb in {}", package, work.string());
    const std::string version = run_command(fmt::format("dpkg-deb -f {} Version", shell_quote(deb)));
    run_command(fmt::format("dpkg-deb -x {} {}", shell_quote(deb), dir));
    versions += fmt::format("{}{} {}", versions.empty() ? "" : "\n", package, version);
  }
  return versions;
}

// The directory holding en-US/ and de/.
fs::path help_root(const fs::path& tree) {
  for (const fs::path& candidate : {tree / "usr/share/libreoffice/help", tree}) {
    if (fs::is_directory(candidate / "en-US/text") && fs::is_directory(candidate / "de/text")) return candidate;
  }
  fail("'{}' holds neither usr/share/libreoffice/help/{{en-US,de}}/text nor {{en-US,de}}/text", tree.string());
}

bool wanted_id(std::string_view id) { return id.rfind("par_id", 0) == 0 || id.rfind("hd_id", 0) == 0; }

std::size_t count_words(const std::string& text) {
  std::size_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

struct Pair {
  std::string en, de;
};

std::vector<Pair> pair_pages(const fs::path& root, LibreOfficeHelpReport& report) {
  const fs::path english_root = root / "en-US/text", german_root = root / "de/text";
  std::vector<std::string> pages;
  for (const auto& entry : fs::recursive_directory_iterator(english_root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".html") {
      pages.push_back(fs::relative(entry.path(), english_root).generic_string());
    }
  }
  std::sort(pages.begin(), pages.end());
  std::vector<Pair> pairs;
  for (const std::string& page : pages) {
    const fs::path german_page = german_root / page;
    if (!fs::exists(german_page)) continue;
    ++report.pages;
    const auto english = extract_id_texts(read_file((english_root / page).string()), wanted_id);
    const auto german = extract_id_texts(read_file(german_page.string()), wanted_id);
    // id -> its German texts in order; the k-th English occurrence takes the k-th German one
    std::map<std::string, std::vector<const std::string*>> german_by_id;
    for (const auto& item : german) german_by_id[item.id].push_back(&item.text);
    std::map<std::string, std::size_t> seen;
    for (const auto& item : english) {
      const std::size_t k = seen[item.id]++;
      auto found = german_by_id.find(item.id);
      if (found == german_by_id.end() || k >= found->second.size()) continue;
      pairs.push_back({item.text, *found->second[k]});
    }
  }
  report.pairs_found = pairs.size();
  return pairs;
}

std::vector<Pair> filter_pairs(std::vector<Pair> pairs, LibreOfficeHelpReport& report) {
  std::vector<Pair> kept;
  std::unordered_set<std::string> seen;
  for (auto& pair : pairs) {
    if (pair.en.empty() || pair.de.empty()) {
      ++report.dropped_empty;
      continue;
    }
    if (pair.en == pair.de) {
      ++report.dropped_identical;
      continue;
    }
    if (!is_valid_utf8(pair.en) || !is_valid_utf8(pair.de)) {
      ++report.dropped_invalid;
      continue;
    }
    // '\n' cannot occur (whitespace is collapsed), so "en\nde" identifies the pair
    if (!seen.insert(pair.en + "\n" + pair.de).second) {
      ++report.dropped_duplicate;
      continue;
    }
    kept.push_back(std::move(pair));
  }
  report.pairs = kept.size();
  return kept;
}

void write_split(const fs::path& out, const std::string& name, const std::vector<Pair>& pairs,
                 const std::vector<std::size_t>& indexes, bool compress_xz) {
  std::string english, german;
  for (std::size_t i : indexes) {
    english += pairs[i].en + "\n";
    german += pairs[i].de + "\n";
  }
  const std::string suffix = compress_xz ? ".xz" : "";
  write_file((out / (name + ".en" + suffix)).string(), english, compress_xz);
  write_file((out / (name + ".de" + suffix)).string(), german, compress_xz);
}

}  // namespace

LibreOfficeHelpReport build_libreoffice_help(const LibreOfficeHelpOptions& options) {
  AGF_CHECK(!options.out.empty(), "corpus build: --out is required");
  LibreOfficeHelpReport report;
  fs::path tree = options.from;
  fs::path work;
  if (options.from.empty()) {
    std::string pattern = (fs::temp_directory_path() / "agf-libreoffice-help-XXXXXX").string();
    AGF_CHECK(::mkdtemp(pattern.data()) != nullptr, "cannot create a temporary directory under {}",
              fs::temp_directory_path().string());
    work = tree = pattern;
    report.versions = download_and_unpack(work);
  } else {
    AGF_CHECK(fs::is_directory(tree), "corpus build: --from '{}' is not a directory", options.from);
    report.versions = "(unpacked tree given with --from; package versions not known)";
  }
  std::vector<Pair> pairs = filter_pairs(pair_pages(help_root(tree), report), report);
  if (!work.empty()) fs::remove_all(work);

  AGF_CHECK(pairs.size() > options.valid_size + options.test_size,
            "corpus build: only {} pairs, not enough for {} valid + {} test and a training set", pairs.size(),
            options.valid_size, options.test_size);
  std::vector<std::size_t> order(pairs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  seeded_shuffle(order, options.seed);
  std::vector<std::size_t> valid(order.begin(), order.begin() + options.valid_size);
  std::vector<std::size_t> test(order.begin() + options.valid_size,
                                order.begin() + options.valid_size + options.test_size);
  std::vector<std::size_t> train(order.begin() + options.valid_size + options.test_size, order.end());
  for (auto* split : {&train, &valid, &test}) std::sort(split->begin(), split->end());
  report.train = train.size();
  report.valid = valid.size();
  report.test = test.size();
  for (const auto& pair : pairs) {
    report.words_en += count_words(pair.en);
    report.words_de += count_words(pair.de);
  }

  const fs::path out = options.out;
  fs::create_directories(out);
  write_split(out, "train", pairs, train, options.compress_xz);
  write_split(out, "valid", pairs, valid, options.compress_xz);
  write_split(out, "test", pairs, test, options.compress_xz);
  write_file((out / "SOURCE").string(),
             fmt::format("LibreOffice help, English (en-US) and German (de), paired paragraph by paragraph through\n"
                         "element ids; built by `agf corpus build libreoffice-help` (data/libreoffice_help_corpus.h).\n"
                         "\n"
                         "packages:\n{}\n"
                         "\n"
                         "seed {}; valid {}, test {}, train {} pairs; {} English and {} German words in all\n"
                         "{} pages paired; {} id pairs found; dropped: {} empty, {} identical, {} invalid UTF-8, "
                         "{} duplicate\n",
                         report.versions, options.seed, report.valid, report.test, report.train, report.words_en,
                         report.words_de, report.pages, report.pairs_found, report.dropped_empty,
                         report.dropped_identical, report.dropped_invalid, report.dropped_duplicate));
  write_file((out / "NOTICE").string(),
             "The sentences in this directory are taken from the LibreOffice help as packaged by Debian\n"
             "(libreoffice-help-en-us, libreoffice-help-de).\n"
             "\n"
             "Copyright 2000, 2010 Oracle and/or its affiliates.\n"
             "Copyright (c) 2000, 2010 LibreOffice contributors and/or their affiliates.\n"
             "\n"
             "This Source Code Form is subject to the terms of the Mozilla Public License, v. 2.0. If a copy\n"
             "of the MPL was not distributed with this file, You can obtain one at https://mozilla.org/MPL/2.0/.\n"
             "Some of the material incorporates work under the Apache License 2.0 (see the Debian copyright\n"
             "file of the packages). The original source is available from https://www.libreoffice.org/ and\n"
             "from Debian (apt-get source libreoffice).\n");
  return report;
}

}  // namespace agf::data
