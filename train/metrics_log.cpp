#include "train/metrics_log.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/error.h"

namespace agf::train {

MetricsLog::MetricsLog(const std::string& path, int64_t keep_through_step) : path_(path) {
  std::vector<std::string> kept;
  if (keep_through_step >= 0) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      try {
        const auto record = nlohmann::json::parse(line);
        if (record.value("step", int64_t{0}) <= keep_through_step) kept.push_back(line);
      } catch (const nlohmann::json::exception&) {
        // a line cut short by a crash: dropped
      }
    }
  }
  file_ = std::fopen(path.c_str(), "w");
  AGF_CHECK(file_ != nullptr, "{}: cannot write: {}", path, std::strerror(errno));
  for (const std::string& line : kept) std::fprintf(file_, "%s\n", line.c_str());
  std::fflush(file_);
}

MetricsLog::~MetricsLog() {
  if (file_) std::fclose(file_);
}

void MetricsLog::write(const nlohmann::json& record) {
  const std::string line = record.dump();
  std::fprintf(file_, "%s\n", line.c_str());
  std::fflush(file_);
}

}  // namespace agf::train
