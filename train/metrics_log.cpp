#include "train/metrics_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "train/atomic_file.h"

namespace agf::train {

MetricsLog::MetricsLog(const std::string& path, int64_t keep_through_step) : path_(path) {
  if (const long page = ::sysconf(_SC_PAGESIZE); page > 0) page_ = page;
  // The kept lines go to a new file that replaces the old one in one rename: a kill during the rewrite
  // leaves the old file, which the next resume reads again.
  AtomicFile rewritten(path);
  if (keep_through_step >= 0) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      try {
        const auto record = nlohmann::json::parse(line);
        if (record.value("step", int64_t{0}) > keep_through_step) continue;
      } catch (const nlohmann::json::exception&) {
        continue;  // a line cut short by a crash of an older version, or a power cut: dropped
      }
      line += '\n';
      rewritten.write(line.data(), line.size());
      size_ += static_cast<off_t>(line.size());
    }
  }
  rewritten.commit();
  descriptor_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  AGF_CHECK(descriptor_ >= 0, "{}: cannot open for writing: {}", path, std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void MetricsLog::write_at(const std::string& bytes, off_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t written = ::pwrite(descriptor_, bytes.data() + done, bytes.size() - done,
                                     offset + static_cast<off_t>(done));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      // A short write is followed by this one, which fails and says why (ENOSPC, EFBIG).
      const int error_number = written < 0 ? errno : EIO;
      // Undo: the file's length and its last newline as they were (a padding write overwrites that newline).
      const bool restored = ::ftruncate(descriptor_, size_) == 0 &&
                            (size_ == 0 || ::pwrite(descriptor_, "\n", 1, size_ - 1) == 1);
      fail("{}: write failed: {}{}", path_, write_error(error_number),
           restored ? "; the lines written before are kept" : "; the file may now end with a partial line");
    }
    done += static_cast<std::size_t>(written);
  }
}

void MetricsLog::write(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  const off_t length = static_cast<off_t>(line.size());
  const off_t room = page_ - size_ % page_;  // bytes left in the page the file ends in
  if (length > room && length <= page_ && room < page_) {
    // Spaces after the last line's JSON up to the page boundary: its '\n' moves to the page's last byte.
    std::string padding(static_cast<std::size_t>(room) + 1, ' ');
    padding.back() = '\n';
    write_at(padding, size_ - 1);
    size_ += room;
  }
  write_at(line, size_);
  size_ += length;
}

void MetricsLog::sync() { AGF_CHECK(::fsync(descriptor_) == 0, "{}: fsync failed: {}", path_, write_error(errno)); }

}  // namespace agf::train
