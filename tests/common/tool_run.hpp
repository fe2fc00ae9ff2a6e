// Running the `deepgemm` tool from a test as a user would: its path in the build tree
// (DEEPGEMM_TEST_BINARY_DIR, which CTest sets), a shell command's exit status and output, and the
// global fixture that reports the whole executable skipped (exit 77) where there is no tool to
// run (outside CTest), never passed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace dgemm_test {

struct Result {
  int rc = -1;
  std::string out;
};

// Runs a shell command, capturing stdout (and stderr unless `with_stderr` is false).
inline Result sh(const std::string& cmd, bool with_stderr = true) {
  Result r;
  FILE* pipe = ::popen((cmd + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  int status = ::pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The tool built with the tests; "" outside CTest.
inline std::string tool() {
  const char* bin = std::getenv("DEEPGEMM_TEST_BINARY_DIR");
  return bin ? std::string(bin) + "/src/tools/deepgemm" : std::string();
}

// In every test of the tool: using dgemm_test::RequireTool; BOOST_TEST_GLOBAL_FIXTURE(RequireTool);
struct RequireTool {
  RequireTool() {
    if (!tool().empty() && std::filesystem::exists(tool())) return;
    std::printf("SKIPPED: the deepgemm tool was not found (DEEPGEMM_TEST_BINARY_DIR; run through CTest)\n");
    std::fflush(stdout);
    std::exit(77);
  }
};

}  // namespace dgemm_test
