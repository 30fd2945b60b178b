#include "train/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace agf::train {

std::string write_error(int error_number) {
  std::string why = std::strerror(error_number);
  if (error_number == ENOSPC || error_number == EDQUOT) why += " (the disk or the quota is full)";
  if (error_number == EFBIG) why += " (past the file-size limit: ulimit -f)";
  return why;
}

void sync_parent_folder(const std::string& path) {
  const std::filesystem::path target(path);
  const std::string folder = target.has_parent_path() ? target.parent_path().string() : ".";
  const int directory = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  AGF_CHECK(directory >= 0, "{}: cannot open the folder to fsync it: {}", folder, std::strerror(errno));
  const int status = ::fsync(directory);
  const int error_number = errno;
  ::close(directory);
  AGF_CHECK(status == 0 || error_number == EINVAL, "{}: fsync of the folder failed: {}", folder,
            write_error(error_number));
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), temporary_(path_ + ".tmp") {
  descriptor_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  AGF_CHECK(descriptor_ >= 0, "{}: cannot create: {}", temporary_, write_error(errno));
}

AtomicFile::~AtomicFile() {
  if (descriptor_ < 0) return;  // committed
  ::close(descriptor_);
  ::unlink(temporary_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  AGF_CHECK(descriptor_ >= 0, "{}: write after commit", path_);
  const char* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t written = ::write(descriptor_, cursor, bytes);
    if (written < 0 && errno == EINTR) continue;
    // A short write is followed by one that fails and says why (ENOSPC, EFBIG); 0 bytes is reported as is.
    AGF_CHECK(written > 0, "{}: write failed after {} bytes: {}; {} is left as it was", temporary_, written_,
              written == 0 ? "no byte written" : write_error(errno), path_);
    cursor += written;
    bytes -= static_cast<std::size_t>(written);
    written_ += static_cast<std::size_t>(written);
  }
}

void AtomicFile::commit() {
  AGF_CHECK(descriptor_ >= 0, "{}: committed twice", path_);
  // A delayed-allocation filesystem can report a full disk only here, at fsync or at close.
  AGF_CHECK(::fsync(descriptor_) == 0, "{}: fsync failed: {}; {} is left as it was", temporary_, write_error(errno),
            path_);
  const int closed = ::close(descriptor_);
  descriptor_ = -1;
  if (closed != 0) {
    const int error_number = errno;
    ::unlink(temporary_.c_str());
    fail("{}: close failed: {}; {} is left as it was", temporary_, write_error(error_number), path_);
  }
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temporary_.c_str());
    fail("{}: cannot rename {} into place: {}", path_, temporary_, std::strerror(error_number));
  }
  sync_parent_folder(path_);
}

}  // namespace agf::train
