#pragma once
// A file that no crash leaves half-written. The bytes go to "<path>.tmp" beside the target; commit()
// fsyncs it, renames it over `path` and fsyncs the folder. Killed at any instant (SIGKILL, a power cut
// after the fsyncs), `path` is either the previous file, untouched, or the complete new one; what can be
// left is the ".tmp", which no reader takes for the file (the trainer removes them when it starts).
// A failed write (a full disk: ENOSPC; a file-size limit: EFBIG) throws naming the file, removes the
// ".tmp" and leaves `path` as it was.
//
//   AtomicFile file(path);
//   file.write(header.data(), header.size());
//   file.commit();   // without it (an exception on the way), the destructor discards the ".tmp"
#include <cstddef>
#include <string>

namespace agf::train {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);
  void commit();

  const std::string& temporary_path() const { return temporary_; }

 private:
  std::string path_, temporary_;
  int descriptor_ = -1;
  std::size_t written_ = 0;
};

// fsync of the folder that holds `path`, so that a rename or a new name in it survives a power cut.
// Folders whose filesystem cannot fsync them (EINVAL) are let be.
void sync_parent_folder(const std::string& path);

// strerror(error_number), with a hint for the errors that a full disk or a file-size limit gives.
std::string write_error(int error_number);

}  // namespace agf::train
