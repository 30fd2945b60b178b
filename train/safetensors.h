#pragma once
// safetensors files (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
// "__metadata__": {"key": "value"}}, then the raw little-endian tensor bytes. PyTorch and the
// safetensors library read what agf writes, and agf reads theirs.
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace agf::train {

struct SafetensorsFile {
  std::vector<std::pair<std::string, Tensor>> tensors;  // in file order (agf writes them sorted by name)
  std::map<std::string, std::string> metadata;

  const Tensor* find(const std::string& name) const;
  const Tensor& at(const std::string& name) const;  // throws naming the missing tensor
};

// Writes atomically (train/atomic_file.h): a temporary file beside `path`, fsync, rename over `path`, fsync
// of the folder. A crash or a full disk mid-write leaves the previous file intact.
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads and validates: the header length against the file size, the JSON, every dtype, shape and
// offset range (in bounds, non-overlapping, matching the shape). Errors name the file and the problem.
SafetensorsFile load_safetensors(const std::string& path);
// The same from the file's bytes in memory (a checkpoint sent to the other processes of a distributed run);
// `path` names it in errors.
SafetensorsFile load_safetensors_bytes(const std::string& bytes, const std::string& path);

}  // namespace agf::train
