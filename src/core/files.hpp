// Reading and writing the files the library itself touches (hardware descriptions, the kernel
// cache, the autotuning memory) so that no file can hang it, exhaust its memory, or slip it code:
// only regular files are read, never more than a bound and never more than their real size,
// FIFOs are opened without waiting, symlinks are followed only where the user names the file,
// and writes go to a fresh O_EXCL file renamed into place.
#pragma once

#include <cstddef>
#include <string>

namespace dgemm {

enum class ReadStatus {
  Ok,
  Missing,     // no such file (ENOENT, ENOTDIR)
  NotRegular,  // a directory, FIFO, device, socket, or (with follow_symlinks false) a symlink
  TooLarge,    // larger than max_bytes
  Failed,      // open or read failed otherwise (permissions, I/O); `why` says how
};

struct ReadResult {
  ReadStatus status = ReadStatus::Failed;
  std::string why;  // for messages: "a FIFO", "3145728 bytes", strerror(errno)
};

// Reads the whole of `path` into *out when it is a regular file of at most max_bytes.
ReadResult read_regular_file(const std::string& path, std::size_t max_bytes, bool follow_symlinks, std::string* out);

// Writes `bytes` to a new file next to `path` (created with O_EXCL, so nothing planted there is
// reused) and renames it over `path`, so readers see the old file or the new one, never half.
// False (and nothing left behind) when it cannot.
bool write_file_atomically(const std::string& path, const std::string& bytes);

// Creates `dir` and its missing parents (mode 0700) and checks that it may hold files this
// process will later trust: a directory owned by this user and not writable by group or others
// (whoever can write it could make this process load their code; a checksum detects damage, not
// intent). Returns "" when usable, else why not.
std::string prepare_private_dir(const std::string& dir);

}  // namespace dgemm
