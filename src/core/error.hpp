// Errors inside the library: one exception type carrying a status and a message. The C boundary
// (src/api) catches it and turns it into a dgemm_status_t plus the thread's last-error text.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace dgemm {

// Same numbers as dgemm_status_t (checked by static_assert in src/api).
enum class Status : int {
  Success = 0,
  InvalidArgument = 1,
  NotSupported = 2,
  OutOfMemory = 3,
  InsufficientWorkspace = 4,
  ContextMismatch = 5,
  NoDevice = 6,
  DeviceError = 7,
  CompileError = 8,
  ArchFileError = 9,
  InternalError = 10,
};

class Error : public std::runtime_error {
 public:
  Error(Status status, std::string message) : std::runtime_error(std::move(message)), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

// Builds a message from any streamable pieces: fail(Status::InvalidArgument, "lda = ", lda, " ...").
template <class... Parts>
[[noreturn]] void fail(Status status, const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(status, os.str());
}

}  // namespace dgemm
