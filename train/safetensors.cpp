#include "train/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

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
    header[name] = {{"dtype", safetensors_dtype(tensor.dtype())}, {"shape", tensor.shape()},
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

// Reads [offset, offset + count) of the file into `destination`; false when that fails.
using ByteReader = std::function<bool(uint64_t offset, char* destination, uint64_t count)>;

SafetensorsFile parse_safetensors(uint64_t file_size, const ByteReader& read_bytes, const std::string& path) {
  AGF_CHECK(file_size >= 8, "{}: not a safetensors file ({} bytes, shorter than the 8-byte header length)", path,
            file_size);
  unsigned char length_bytes[8];
  AGF_CHECK(read_bytes(0, reinterpret_cast<char*>(length_bytes), 8), "{}: read of the header length failed", path);
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= static_cast<uint64_t>(length_bytes[i]) << (8 * i);
  AGF_CHECK(header_length <= file_size - 8 && header_length <= (100u << 20),
            "{}: corrupt or truncated safetensors file (header length {} but the file has {} bytes)", path,
            header_length, file_size);
  std::string json(header_length, '\0');
  AGF_CHECK(read_bytes(8, json.data(), header_length), "{}: read of the header failed", path);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& error) {
    fail("{}: corrupt safetensors header: {}", path, error.what());
  }
  AGF_CHECK(header.is_object(), "{}: corrupt safetensors header (not a JSON object)", path);
  const uint64_t data_size = file_size - 8 - header_length;

  SafetensorsFile file;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  try {
    for (const auto& [name, entry] : header.items()) {
      if (name == "__metadata__") {
        for (const auto& [key, value] : entry.items()) file.metadata[key] = value.get<std::string>();
        continue;
      }
      const DType dtype = parse_safetensors_dtype(entry.at("dtype").get<std::string>(), path, name);
      const Shape shape = entry.at("shape").get<Shape>();
      const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      AGF_CHECK(offsets.size() == 2 && offsets[0] <= offsets[1], "{}: tensor '{}' has invalid data_offsets", path, name);
      for (int64_t extent : shape) AGF_CHECK(extent >= 0, "{}: tensor '{}' has a negative extent", path, name);
      uint64_t expected = 0;
      try {
        expected = shape_bytes(shape, dtype_size(dtype));
      } catch (const Error& error) {
        fail("{}: tensor '{}' {}: {}", path, name, dtype_name(dtype), error.what());
      }
      AGF_CHECK(offsets[1] - offsets[0] == expected, "{}: tensor '{}' {} {} needs {} bytes but its data_offsets "
                "span {}", path, name, dtype_name(dtype), shape_string(shape), expected, offsets[1] - offsets[0]);
      AGF_CHECK(offsets[1] <= data_size, "{}: truncated: tensor '{}' ends at byte {} of a {}-byte data section",
                path, name, offsets[1], data_size);
      Tensor tensor = Tensor::empty(shape, dtype);
      AGF_CHECK(expected == 0 || read_bytes(8 + header_length + offsets[0], static_cast<char*>(tensor.raw_data()), expected),
                "{}: read of tensor '{}' failed", path, name);
      ranges.emplace_back(offsets[0], offsets[1]);
      file.tensors.emplace_back(name, std::move(tensor));
    }
  } catch (const nlohmann::json::exception& error) {
    fail("{}: corrupt safetensors header: {}", path, error.what());
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    AGF_CHECK(ranges[i].first >= ranges[i - 1].second, "{}: corrupt safetensors file (overlapping tensors)", path);
  }
  return file;
}

}  // namespace

SafetensorsFile load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  AGF_CHECK(in.good(), "{}: cannot open", path);
  in.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  return parse_safetensors(file_size, [&](uint64_t offset, char* destination, uint64_t count) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(destination, static_cast<std::streamsize>(count));
    return in.good();
  }, path);
}

SafetensorsFile load_safetensors_bytes(const std::string& bytes, const std::string& path) {
  return parse_safetensors(bytes.size(), [&](uint64_t offset, char* destination, uint64_t count) {
    if (offset > bytes.size() || count > bytes.size() - offset) return false;
    std::memcpy(destination, bytes.data() + offset, count);
    return true;
  }, path);
}

}  // namespace agf::train
