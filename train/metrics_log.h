#pragma once
// RUN/metrics.jsonl: one JSON object per line, flushed as written so a crash loses at most the line
// being written. On resume the lines after the checkpoint's step are dropped (they will be written again).
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace agf::train {

class MetricsLog {
 public:
  // `keep_through_step` < 0: start a new file; otherwise keep the existing lines whose "step" is at most it.
  MetricsLog(const std::string& path, int64_t keep_through_step);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void write(const nlohmann::json& record);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace agf::train
