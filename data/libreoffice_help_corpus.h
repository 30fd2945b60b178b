#pragma once
// The bundled en-de corpus: LibreOffice's help pages, which Debian ships professionally translated in
// both languages (libreoffice-help-en-us, libreoffice-help-de; MPL-2.0). Every help page exists under
// help/en-US/text/... and help/de/text/... with the same relative path, and its paragraphs and headings
// carry the same element ids in both ("par_id3146957", "hd_id3147291").
//
// Pairing: for each page present in both trees (paths in byte order), the k-th element with a given
// id in the English page pairs with the k-th element with that id in the German page (ids starting
// "par_id" or "hd_id"; text extracted as html_text.h says).
// Filtering, in this order: pairs with an empty side, pairs whose sides are identical (untranslated
// text, code, names), pairs with invalid UTF-8; then exact duplicate pairs (first kept).
// Split: the surviving pairs are shuffled with seeded_shuffle(seed); the first `valid_size` are valid,
// the next `test_size` test, the rest train; each split is then put back in corpus order (which keeps
// neighbouring sentences together and compresses better).
#include <cstdint>
#include <string>

namespace agf::data {

struct LibreOfficeHelpOptions {
  std::string from;  // an unpacked tree (holding usr/share/libreoffice/help or en-US/ and de/);
                     // empty: `apt-get download` the packages and unpack them with dpkg-deb
  std::string out;   // directory for {train,valid,test}.{en,de}[.xz], SOURCE and NOTICE
  std::uint64_t seed = 1;
  std::size_t valid_size = 1500;
  std::size_t test_size = 1500;
  bool compress_xz = false;
};

struct LibreOfficeHelpReport {
  std::size_t pages = 0, pairs_found = 0, dropped_empty = 0, dropped_identical = 0, dropped_invalid = 0,
              dropped_duplicate = 0, pairs = 0, train = 0, valid = 0, test = 0, words_en = 0, words_de = 0;
  std::string versions;  // "libreoffice-help-en-us 4:7.4.7-..., libreoffice-help-de ..." or a note
};

LibreOfficeHelpReport build_libreoffice_help(const LibreOfficeHelpOptions& options);

}  // namespace agf::data
