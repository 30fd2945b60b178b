// Peer check: the exported Hugging Face tokenizer.json, loaded by the `tokenizers` Python package,
// gives the same ids as agf on the bundled validation text (both languages), and decodes agf's ids back
// to the text. Skips with a reason when python3 or `tokenizers` is missing.
#include <catch2/catch.hpp>

#include "tests/skip.h"

#include <cstdlib>
#include <string>

#include "data/bpe_codec.h"
#include "data/bpe_learn.h"
#include "data/text_file.h"
#include "tests/data/scratch_dir.h"

using namespace agf::data;
using agf::test::ScratchDir;

TEST_CASE("Hugging Face tokenizer.json export encodes like agf (peer: python tokenizers)", "[data][bpe][peer]") {
  if (std::system("python3 -c 'import tokenizers' >/dev/null 2>&1") != 0) {
    AGF_SKIP("the Python package `tokenizers` is not installed (pip install tokenizers)");
  }
  const std::string corpus = std::string(AGF_SOURCE_DIR) + "/data/corpora/libreoffice-help-en-de/";
  const std::string text = read_file(corpus + "valid.en.xz") + read_file(corpus + "valid.de.xz");
  const auto lines = split_lines(text);
  BpeLearnOptions options;
  options.vocab_size = 2000;
  const BpeModel model = learn_bpe(lines, options);
  const BpeCodec codec(model);
  ScratchDir dir;
  dir.write("tokenizer.json", model.to_huggingface_json());
  dir.write("text.txt", text);
  std::string agf_ids;
  for (const auto& ids : codec.encode_lines(lines)) {
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (k) agf_ids += ' ';
      agf_ids += std::to_string(ids[k]);
    }
    agf_ids += "\n";
  }
  dir.write("agf_ids.txt", agf_ids);
  dir.write("peer.py", "import sys\n"
                       "from tokenizers import Tokenizer\n"
                       "t = Tokenizer.from_file(sys.argv[1] + '/tokenizer.json')\n"
                       "lines = open(sys.argv[1] + '/text.txt', encoding='utf-8').read().split('\\n')[:-1]\n"
                       "agf = open(sys.argv[1] + '/agf_ids.txt').read().split('\\n')[:-1]\n"
                       "assert len(lines) == len(agf), (len(lines), len(agf))\n"
                       "bad = 0\n"
                       "for line, ids in zip(lines, agf):\n"
                       "    mine = [int(x) for x in ids.split()]\n"
                       "    if t.encode(line, add_special_tokens=False).ids != mine or t.decode(mine) != line:\n"
                       "        bad += 1\n"
                       "        if bad <= 3: print('differs:', repr(line))\n"
                       "print(bad, 'of', len(lines), 'lines differ')\n"
                       "sys.exit(1 if bad else 0)\n");
  const std::string command = "python3 " + dir.file("peer.py") + " " + dir.path().string() + " > " +
                              dir.file("out.txt") + " 2>&1";
  const int status = std::system(command.c_str());
  INFO(read_file(dir.file("out.txt")));
  CHECK(status == 0);
}
