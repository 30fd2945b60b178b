#pragma once
// RUN/metrics.jsonl: one JSON object per line, written so that a kill (SIGKILL) at any instant leaves
// whole lines only, and a resumed run leaves each step once.
//
// - A line goes out in one write(2) that stays inside one page of the file. The kernel checks for a fatal
//   signal only between the pages of a write, so such a write is all or nothing; a write that crossed a
//   page boundary could be cut there. A line that would cross one first pads the line before it with
//   spaces up to the boundary (JSON allows trailing whitespace), in one write inside that page, so the
//   file is whole after either write. (A line longer than a page, which agf never writes, is written
//   as it is.)
// - A write that fails (a full disk) is undone, so the file ends with a whole line, and throws naming it.
// - Opened for a resumed run, the file is rewritten atomically (train/atomic_file.h) with the lines up to
//   the checkpoint's step; the run then writes the later steps again instead of adding them twice.
// - sync() fsyncs it. The trainer calls it before each checkpoint, so that the lines a checkpoint covers
//   are on disk whenever the checkpoint is.
#include <sys/types.h>

#include <cstdint>
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
  void sync();

 private:
  // Writes `bytes` at `offset`; on failure restores the file to size_ bytes ending in '\n' and throws.
  void write_at(const std::string& bytes, off_t offset);

  std::string path_;
  int descriptor_ = -1;
  off_t size_ = 0;  // the file's length: whole lines, the last ending in '\n'
  off_t page_ = 4096;
};

}  // namespace agf::train
