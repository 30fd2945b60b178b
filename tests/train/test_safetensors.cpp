#include <catch2/catch.hpp>

#include "tests/skip.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/random.h"
#include "train/safetensors.h"

namespace fs = std::filesystem;
using agf::DType;
using agf::Tensor;

namespace {
fs::path temporary_folder() {
  fs::path folder = fs::temp_directory_path() / fmt::format("agf-test-{}-{}", ::getpid(), std::rand());
  fs::create_directories(folder);
  return folder;
}
bool python_has(const std::string& module) {
  return std::system(("python3 -c 'import " + module + "' >/dev/null 2>&1").c_str()) == 0;
}
}  // namespace

TEST_CASE("safetensors round trip keeps names, dtypes, shapes, values and metadata", "[train][safetensors]") {
  const fs::path folder = temporary_folder();
  agf::Generator generator(1);
  const Tensor weight = agf::uniform({3, 4}, generator);
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{1, -2, 3}, {3}, DType::i64);
  const Tensor half = weight.to(DType::bf16);
  const Tensor transposed = agf::uniform({2, 5}, generator, -1, 1, DType::f64).transpose(0, 1);
  const std::string path = (folder / "model.safetensors").string();
  agf::train::save_safetensors(
      path, {{"w", weight}, {"ids", ids}, {"h", half}, {"t", transposed}, {"empty", Tensor::zeros({0, 2})}},
      {{"preset", "cpu-small"}, {"heads", "4"}});
  const auto file = agf::train::load_safetensors(path);
  CHECK(file.metadata.at("preset") == "cpu-small");
  CHECK(file.at("w").to_double_vector() == weight.to_double_vector());
  CHECK(file.at("ids").dtype() == DType::i64);
  CHECK(file.at("ids").to_int_vector() == std::vector<int64_t>{1, -2, 3});
  CHECK(file.at("h").dtype() == DType::bf16);
  CHECK(file.at("h").to_double_vector() == half.to_double_vector());
  CHECK(file.at("t").shape() == agf::Shape{5, 2});
  CHECK(file.at("t").to_double_vector() == transposed.to_double_vector());
  CHECK(file.at("empty").shape() == agf::Shape{0, 2});
  CHECK_THROWS_WITH(file.at("missing"), Catch::Contains("no tensor named 'missing'"));
  CHECK_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(folder);
}

TEST_CASE("corrupt and truncated safetensors files give errors naming the file", "[train][safetensors][errors]") {
  const fs::path folder = temporary_folder();
  const std::string good = (folder / "good.safetensors").string();
  agf::train::save_safetensors(good, {{"x", Tensor::ones({64})}});
  const auto bytes = fs::file_size(good);
  auto write_variant = [&](const std::string& name, auto mutate) {
    std::ifstream in(good, std::ios::binary);
    std::string content((std::istreambuf_iterator<char>(in)), {});
    mutate(content);
    const std::string path = (folder / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  };
  const std::string truncated = write_variant("truncated.safetensors", [&](std::string& c) { c.resize(bytes - 10); });
  CHECK_THROWS_WITH(agf::train::load_safetensors(truncated),
                    Catch::Contains("truncated.safetensors") && Catch::Contains("truncated"));
  const std::string tiny = write_variant("tiny.safetensors", [](std::string& c) { c.resize(5); });
  CHECK_THROWS_WITH(agf::train::load_safetensors(tiny), Catch::Contains("not a safetensors file"));
  const std::string huge_header = write_variant("header.safetensors", [](std::string& c) { c[6] = 1; });
  CHECK_THROWS_WITH(agf::train::load_safetensors(huge_header), Catch::Contains("corrupt or truncated"));
  const std::string bad_json = write_variant("json.safetensors", [](std::string& c) {
    c[8] = '[';
    c[9] = '}';
  });
  CHECK_THROWS_WITH(agf::train::load_safetensors(bad_json), Catch::Contains("corrupt safetensors header"));
  const std::string bad_dtype = write_variant("dtype.safetensors", [](std::string& c) {
    const auto at = c.find("F32");
    c.replace(at, 3, "U32");
  });
  CHECK_THROWS_WITH(agf::train::load_safetensors(bad_dtype), Catch::Contains("dtype 'U32'"));
  CHECK_THROWS_WITH(agf::train::load_safetensors((folder / "absent").string()), Catch::Contains("cannot open"));
  fs::remove_all(folder);
}

TEST_CASE("a tensor whose byte size overflows 64 bits is refused naming the file and tensor",
          "[train][safetensors][errors]") {
  const fs::path folder = temporary_folder();
  // A header declaring one huge tensor with an empty data range, as a hostile file would.
  auto write_header = [&](const std::string& name, const std::string& json) {
    const std::string path = (folder / name).string();
    std::string content(8, '\0');
    for (int i = 0; i < 8; ++i) content[i] = static_cast<char>(json.size() >> (8 * i));
    std::ofstream(path, std::ios::binary) << content << json;
    return path;
  };
  // 2^62 f32 elements: 2^64 bytes, which wrapped to 0 and matched the empty data_offsets.
  const std::string wraps = write_header(
      "wraps.safetensors", R"({"huge":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})");
  CHECK_THROWS_WITH(agf::train::load_safetensors(wraps), Catch::Contains("wraps.safetensors") &&
                                                             Catch::Contains("tensor 'huge'") &&
                                                             Catch::Contains("do not fit in 64 bits"));
  // An element count that overflows int64 itself.
  const std::string overflows = write_header(
      "overflows.safetensors", R"({"huge":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})");
  CHECK_THROWS_WITH(agf::train::load_safetensors(overflows), Catch::Contains("overflows.safetensors") &&
                                                                 Catch::Contains("tensor 'huge'") &&
                                                                 Catch::Contains("does not fit in 64 bits"));
  fs::remove_all(folder);
}

TEST_CASE("the safetensors library reads agf's files and agf reads its files", "[train][safetensors][peer]") {
  if (!python_has("safetensors") || !python_has("numpy")) {
    AGF_SKIP("python3 modules safetensors and numpy are not installed (tools/setup.sh installs them)");
  }
  const fs::path folder = temporary_folder();
  const std::string ours = (folder / "ours.safetensors").string();
  const std::string theirs = (folder / "theirs.safetensors").string();
  agf::train::save_safetensors(ours,
                               {{"a", Tensor::from_vector(std::vector<double>{1.5, -2, 3, 4}, {2, 2})},
                                {"b", Tensor::from_vector(std::vector<int64_t>{7, 8, 9}, {3}, DType::i32)}},
                               {{"note", "hello"}});
  const std::string script = fmt::format(
      "from safetensors.numpy import load_file, save_file\n"
      "from safetensors import safe_open\n"
      "import numpy as np\n"
      "t = load_file('{0}')\n"
      "assert t['a'].dtype == np.float32 and t['a'].tolist() == [[1.5, -2.0], [3.0, 4.0]], t['a']\n"
      "assert t['b'].dtype == np.int32 and t['b'].tolist() == [7, 8, 9]\n"
      "assert safe_open('{0}', 'np').metadata() == {{'note': 'hello'}}\n"
      "save_file({{'z': np.arange(6, dtype=np.float64).reshape(3, 2)}}, '{1}', metadata={{'k': 'v'}})\n",
      ours, theirs);
  const std::string script_path = (folder / "peer.py").string();
  std::ofstream(script_path) << script;
  REQUIRE(std::system(("python3 " + script_path).c_str()) == 0);
  const auto file = agf::train::load_safetensors(theirs);
  CHECK(file.at("z").dtype() == DType::f64);
  CHECK(file.at("z").to_double_vector() == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(file.metadata.at("k") == "v");
  fs::remove_all(folder);
}
