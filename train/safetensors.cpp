#include "train/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "train/atomic_file.h"

namespace agf::train {

namespace {

const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::f64: return "F64";
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
  }
  return "?";
}

DType parse_safetensors_dtype(const std::string& name, const std::string& path, const std::string& tensor) {
  if (name == "F64") return DType::f64;
  if (name == "F32") return DType::f32;
  if (name == "F16") return DType::f16;
  if (name == "BF16") return DType::bf16;
  if (name == "I32") return DType::i32;
  if (name == "I64") return DType::i64;
  fail("{}: tensor '{}' has dtype '{}', which agf does not read (F64, F32, F16, BF16, I32, I64)", path, tensor, name);
}

}  // namespace

const Tensor* SafetensorsFile::find(const std::string& name) const {
  for (const auto& [key, tensor] : tensors) {
    if (key == name) return &tensor;
  }
  return nullptr;
}

const Tensor& SafetensorsFile::at(const std::string& name) const {
  const Tensor* tensor = find(name);
  AGF_CHECK(tensor != nullptr, "safetensors: no tensor named '{}'", name);
  return *tensor;
}

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<std::pair<std::string, Tensor>> sorted = tensors;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::size_t offset = 0;
  for (auto& [name, tensor] : sorted) {
    AGF_CHECK(name != "__metadata__" && !name.empty(), "save_safetensors: invalid tensor name '{}'", name);
    tensor = tensor.to(Device::cpu()).contiguous();
    const std::size_t bytes = static_cast<std::size_t>(tensor.numel()) * dtype_size(tensor.dtype());
    header[name] = {{"dtype", safetensors_dtype(tensor.dtype())},
                    {"shape", tensor.shape()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned
  const uint64_t header_length = json.size();

  AtomicFile file(path);
  unsigned char length_bytes[8];
  for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<unsigned char>(header_length >> (8 * i));
  file.write(length_bytes, 8);
  file.write(json.data(), json.size());
  for (const auto& [name, tensor] : sorted) {
    file.write(tensor.numel() ? tensor.raw_data() : nullptr,
               static_cast<std::size_t>(tensor.numel()) * dtype_size(tensor.dtype()));
  }
  file.commit();
}

namespace {

// The largest header agf reads: a checkpoint's header is a few kilobytes (plus the BPE model in its
// metadata, well under a megabyte); the cap keeps a corrupt length from sizing a huge buffer.
constexpr uint64_t max_header_bytes = 100u << 20;

// A name or JSON value as an error message quotes it: at most 60 bytes, since a hostile header can make
// either megabytes long.
std::string excerpt(const std::string& text) {
  constexpr std::size_t limit = 60;
  return text.size() <= limit ? text : text.substr(0, limit) + "...";
}

// One tensor's entry, checked but not yet read.
struct TensorEntry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

// A JSON value that must be a whole number in [0, limit]. nlohmann's get<uint64_t>() would wrap -1 to
// 2^64 - 1, truncate 2.5 to 2 and cast 1e300 (undefined behaviour); the header is not trusted that far.
uint64_t whole_number(const nlohmann::json& value, uint64_t limit, const std::string& path, const std::string& tensor,
                      const char* field) {
  AGF_CHECK(value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0),
            "{}: tensor '{}' has {} {}, not a whole number >= 0", path, excerpt(tensor), field, excerpt(value.dump()));
  const uint64_t number = value.get<uint64_t>();
  AGF_CHECK(number <= limit, "{}: tensor '{}' has {} {}, above {}", path, excerpt(tensor), field, number, limit);
  return number;
}

// Checks one tensor's entry against the data section's size; reads nothing.
TensorEntry parse_entry(const std::string& name_in_file, const nlohmann::json& entry, uint64_t data_size,
                        const std::string& path) {
  const std::string name = excerpt(name_in_file);  // for messages
  AGF_CHECK(entry.is_object(),
            "{}: tensor '{}' is described by {}, not by an object with dtype, shape and data_offsets", path, name,
            entry.type_name());
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    AGF_CHECK(entry.contains(key), "{}: tensor '{}' lacks \"{}\"", path, name, key);
  }
  TensorEntry parsed;
  parsed.name = name_in_file;
  const auto& dtype = entry.at("dtype");
  AGF_CHECK(dtype.is_string(), "{}: tensor '{}' has dtype {}, not a string", path, name, excerpt(dtype.dump()));
  parsed.dtype = parse_safetensors_dtype(excerpt(dtype.get<std::string>()), path, name);
  const auto& shape = entry.at("shape");
  AGF_CHECK(shape.is_array(), "{}: tensor '{}' has shape {}, not an array", path, name, excerpt(shape.dump()));
  for (const auto& extent : shape) {
    parsed.shape.push_back(static_cast<int64_t>(
        whole_number(extent, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), path, name, "an extent")));
  }
  const auto& offsets = entry.at("data_offsets");
  AGF_CHECK(offsets.is_array() && offsets.size() == 2, "{}: tensor '{}' has data_offsets {}, not [begin, end]", path,
            name, excerpt(offsets.dump()));
  const uint64_t any = std::numeric_limits<uint64_t>::max();
  parsed.begin = whole_number(offsets[0], any, path, name, "a data offset");
  parsed.end = whole_number(offsets[1], any, path, name, "a data offset");
  AGF_CHECK(parsed.begin <= parsed.end, "{}: tensor '{}' has data_offsets [{}, {}], which end before they begin", path,
            name, parsed.begin, parsed.end);
  AGF_CHECK(parsed.end <= data_size, "{}: truncated: tensor '{}' ends at byte {} of a {}-byte data section", path, name,
            parsed.end, data_size);
  uint64_t expected = 0;
  try {
    expected = shape_bytes(parsed.shape, dtype_size(parsed.dtype));
  } catch (const Error& error) {
    fail("{}: tensor '{}' {}: {}", path, name, dtype_name(parsed.dtype), error.what());
  }
  AGF_CHECK(parsed.end - parsed.begin == expected, "{}: tensor '{}' {} {} needs {} bytes but its data_offsets span {}",
            path, name, dtype_name(parsed.dtype), shape_string(parsed.shape), expected, parsed.end - parsed.begin);
  return parsed;
}

// Reads [offset, offset + count) of the file into `destination`; false when that fails.
using ByteReader = std::function<bool(uint64_t offset, char* destination, uint64_t count)>;

SafetensorsFile parse_safetensors(uint64_t file_size, const ByteReader& read_bytes, const std::string& path) {
  AGF_CHECK(file_size >= 8, "{}: not a safetensors file ({} bytes, shorter than the 8-byte header length)", path,
            file_size);
  unsigned char length_bytes[8];
  AGF_CHECK(read_bytes(0, reinterpret_cast<char*>(length_bytes), 8), "{}: read of the header length failed", path);
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= static_cast<uint64_t>(length_bytes[i]) << (8 * i);
  AGF_CHECK(header_length <= file_size - 8,
            "{}: corrupt or truncated safetensors file (header length {} but the file has {} bytes)", path,
            header_length, file_size);
  AGF_CHECK(header_length <= max_header_bytes,
            "{}: corrupt safetensors file (header length {}, above agf's limit of {})", path, header_length,
            max_header_bytes);
  std::string json(header_length, '\0');
  AGF_CHECK(read_bytes(8, json.data(), header_length), "{}: read of the safetensors header failed", path);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& error) {
    fail("{}: corrupt safetensors header: {}", path, error.what());
  }
  AGF_CHECK(header.is_object(), "{}: corrupt safetensors header (not a JSON object)", path);
  const uint64_t data_size = file_size - 8 - header_length;

  // Every entry is checked, and the ranges against each other, before any tensor is allocated: a header
  // of a million entries all pointing at one large range would otherwise allocate it a million times.
  SafetensorsFile file;
  std::vector<TensorEntry> entries;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      AGF_CHECK(entry.is_object(), "{}: \"__metadata__\" is {}, not an object of strings", path, entry.type_name());
      for (const auto& [key, value] : entry.items()) {
        AGF_CHECK(value.is_string(), "{}: metadata '{}' is {}, not a string", path, excerpt(key),
                  excerpt(value.dump()));
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(name, entry, data_size, path));
  }
  // Sorted by where they begin, each non-empty range must begin at or after the end of those before it.
  std::vector<const TensorEntry*> by_offset;
  for (const auto& entry : entries) {
    if (entry.end > entry.begin) by_offset.push_back(&entry);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const TensorEntry &before = *by_offset[i - 1], &after = *by_offset[i];
    AGF_CHECK(after.begin >= before.end,
              "{}: corrupt safetensors file: tensors '{}' [{}, {}) and '{}' [{}, {}) overlap", path,
              excerpt(before.name), before.begin, before.end, excerpt(after.name), after.begin, after.end);
  }
  for (const auto& entry : entries) {
    Tensor tensor = Tensor::empty(entry.shape, entry.dtype);
    const uint64_t bytes = entry.end - entry.begin;
    if (bytes > 0) {
      AGF_CHECK(read_bytes(8 + header_length + entry.begin, static_cast<char*>(tensor.raw_data()), bytes),
                "{}: read of tensor '{}' failed", path, excerpt(entry.name));
    }
    file.tensors.emplace_back(entry.name, std::move(tensor));
  }
  return file;
}

}  // namespace

SafetensorsFile load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  AGF_CHECK(in.good(), "{}: cannot open", path);
  in.seekg(0, std::ios::end);
  const auto end_position = in.tellg();
  AGF_CHECK(end_position >= 0, "{}: cannot read (not a regular file?)", path);
  return parse_safetensors(
      static_cast<uint64_t>(end_position),
      [&](uint64_t offset, char* destination, uint64_t count) {
        in.seekg(static_cast<std::streamoff>(offset));
        in.read(destination, static_cast<std::streamsize>(count));
        return in.good();
      },
      path);
}

SafetensorsFile load_safetensors_bytes(const std::string& bytes, const std::string& path) {
  return parse_safetensors(
      bytes.size(),
      [&](uint64_t offset, char* destination, uint64_t count) {
        if (offset > bytes.size() || count > bytes.size() - offset) return false;
        std::memcpy(destination, bytes.data() + offset, count);
        return true;
      },
      path);
}

}  // namespace agf::train
