// Runs a piece of library code in a forked child with a time limit and (outside sanitizer
// builds) a memory limit, and reports how it ended. For tests of hostile inputs (a FIFO, an
// alias bomb, /dev/zero) whose failure mode is a hang or a runaway allocation: a regression then
// fails the test in seconds instead of hanging or exhausting the machine.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>

namespace dgemm::test {

struct BoundedResult {
  bool finished = false;  // false: killed at the time limit
  std::string text;       // what the child's function returned (e.g. an error message)
};

// `fn` runs in the child; its return value comes back through a pipe. Exceptions become
// "exception: <what>". The child never returns into the test framework.
inline BoundedResult run_bounded(const std::function<std::string()>& fn, double seconds,
                                 long memory_bytes = 1L << 30) {
  int fds[2];
  if (pipe(fds) != 0) return {false, "pipe failed"};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
#if !defined(DGEMM_SANITIZED) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    rlimit limit{rlim_t(memory_bytes), rlim_t(memory_bytes)};
    setrlimit(RLIMIT_AS, &limit);  // sanitizers reserve terabytes of address space: no limit there
#else
    (void)memory_bytes;
#endif
    std::string out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = std::string("exception: ") + e.what();
    } catch (...) {
      out = "exception: unknown";
    }
    for (std::size_t done = 0; done < out.size();) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += std::size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  BoundedResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, int(left.count())) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) {
      r.finished = true;  // the child closed the pipe: it is exiting
      break;
    }
    r.text.append(buf, std::size_t(n));
  }
  close(fds[0]);
  if (!r.finished) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (r.finished && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    r.text += " [child died: status " + std::to_string(status) + "]";
  }
  return r;
}

}  // namespace dgemm::test
