// Bounded, hardened file access (see files.hpp).
#include "core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

namespace dgemm {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace

ReadResult read_regular_file(const std::string& path, std::size_t max_bytes, bool follow_symlinks, std::string* out) {
  // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow_symlinks ? 0 : O_NOFOLLOW);
  Fd f{::open(path.c_str(), flags)};
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return {ReadStatus::Missing, std::strerror(err)};
    if (err == ELOOP && !follow_symlinks) return {ReadStatus::NotRegular, "a symbolic link"};
    if (err == ENXIO) return {ReadStatus::NotRegular, "a socket or device"};
    return {ReadStatus::Failed, std::strerror(err)};
  }
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return {ReadStatus::Failed, std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return {ReadStatus::NotRegular, kind_of(st.st_mode)};
  if (std::uint64_t(st.st_size) > max_bytes) return {ReadStatus::TooLarge, std::to_string(st.st_size) + " bytes"};
  // The real size bounds the allocation; one byte more shows a file that grew since fstat.
  out->assign(std::size_t(st.st_size) + 1, '\0');
  std::size_t got = 0;
  while (got < out->size()) {
    const ssize_t n = ::read(f.fd, &(*out)[got], out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {ReadStatus::Failed, std::strerror(errno)};
    if (n == 0) break;
    got += std::size_t(n);
    if (got > max_bytes) return {ReadStatus::TooLarge, "more than " + std::to_string(max_bytes) + " bytes"};
    if (got == out->size() && got <= max_bytes) out->resize(std::min(max_bytes + 1, out->size() * 2));
  }
  out->resize(got);
  return {ReadStatus::Ok, ""};
}

bool write_file_atomically(const std::string& path, const std::string& bytes) {
  static std::atomic<unsigned> counter{0};
  static const unsigned salt = std::random_device{}();
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(salt) + "." +
                            std::to_string(counter.fetch_add(1));
    Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
    if (f.fd < 0) {
      if (errno == EEXIST) continue;  // someone's file by that name: never write into it
      return false;
    }
    bool ok = true;
    for (std::size_t done = 0; ok && done < bytes.size();) {
      const ssize_t n = ::write(f.fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) done += std::size_t(n);
    }
    ok = ::close(f.fd) == 0 && ok;
    f.fd = -1;
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
      ::unlink(tmp.c_str());
      return false;
    }
    return true;
  }
  return false;
}

std::string prepare_private_dir(const std::string& dir) {
  if (dir.empty()) return "no folder given";
  // Missing parents too, each private to this user (umask can only take bits away).
  for (std::size_t slash = dir.find('/', 1); ; slash = dir.find('/', slash + 1)) {
    const std::string part = slash == std::string::npos ? dir : dir.substr(0, slash);
    if (!part.empty() && ::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create " + part + ": " + std::strerror(errno);
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + " is " + kind_of(st.st_mode) + ", not a folder";
  if (st.st_uid != ::geteuid())
    return dir + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    return dir + " is writable by group or others (mode " + mode + "): anyone who can write it could make " +
           "this process load their code; chmod go-w it or choose a private folder";
  }
  return "";
}

}  // namespace dgemm
