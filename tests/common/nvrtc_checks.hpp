// Helpers shared by the NVRTC compile tests (tests/cpu/test_*_compile.cpp, label cpu: they need
// NVRTC, not a GPU): a private kernel-cache folder, the NVRTC requirement (exit 77 = skipped
// without it), cuobjdump on a compiled cubin, and the ptxas-log spill check. Include only under
// DGEMM_WITH_CUDA; a build without CUDA uses common/skip.hpp's DGEMM_SKIP_WITHOUT_CUDA instead.
#pragma once

#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "backend/cuda/jit.hpp"

namespace dgemm_test {

// A private cache folder (unless the caller chose one, e.g. to fill a cache to carry to a GPU).
// Each compile test registers it: BOOST_TEST_GLOBAL_FIXTURE(dgemm_test::CacheDirFixture).
struct CacheDirFixture {
  CacheDirFixture() {
    if (std::getenv("DEEPGEMM_CACHE_DIR")) return;
    const char* bin = std::getenv("DEEPGEMM_TEST_BINARY_DIR");
    std::string dir = std::string(bin ? bin : ".") + "/jit-cache-test";
    setenv("DEEPGEMM_CACHE_DIR", dir.c_str(), 1);
  }
};

// Global fixture of every NVRTC compile test: without NVRTC there is nothing to check, so the
// executable exits 77, which CTest reports as skipped (SKIP_RETURN_CODE), never as passed.
// The probe runs in a child process, so that this process has not loaded NVRTC when its tests
// start (one test checks what happens when NVRTC cannot be loaded).
struct RequireNvrtc {
  RequireNvrtc() {
    const pid_t pid = fork();
    if (pid == 0) {
      std::string why;
      _exit(dgemm::jit::nvrtc_available(&why) ? 0 : 1);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
    std::string why;
    dgemm::jit::nvrtc_available(&why);
    std::printf("SKIPPED: NVRTC cannot be loaded: %s\n", why.c_str());
    std::exit(77);
  }
};

// $CUDA_HOME/bin/cuobjdump or /usr/local/cuda/bin/cuobjdump, "" when neither is there.
inline std::string find_cuobjdump() {
  std::vector<std::string> c;
  if (const char* h = std::getenv("CUDA_HOME")) c.push_back(std::string(h) + "/bin/cuobjdump");
  c.push_back("/usr/local/cuda/bin/cuobjdump");
  for (const std::string& p : c)
    if (access(p.c_str(), X_OK) == 0) return p;
  return "";
}

// stdout of a shell command ("" when it cannot be started).
inline std::string run_tool(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  return out;
}

// `cuobjdump <args> <cubin>` (stderr included) on the code's cubin, written to a temporary file
// named from `tmpl` (mkstemp's XXXXXX form) and removed afterwards.
inline std::string cuobjdump_cubin(const std::string& cuobjdump, const std::string& args,
                                   const dgemm::jit::CompiledCode& code, const char* tmpl_pattern) {
  std::vector<char> tmpl(tmpl_pattern, tmpl_pattern + std::char_traits<char>::length(tmpl_pattern) + 1);
  int fd = mkstemp(tmpl.data());
  BOOST_REQUIRE(fd >= 0);
  FILE* f = fdopen(fd, "wb");
  fwrite(code.cubin.data(), 1, code.cubin.size(), f);
  fclose(f);
  const std::string out = run_tool(cuobjdump + " " + args + " " + tmpl.data() + " 2>&1");
  std::remove(tmpl.data());
  return out;
}

// Checks every "N bytes spill stores, M bytes spill loads" line of a ptxas log is 0/0; returns
// how many such lines (one per kernel) there were.
inline int check_spill_lines(const std::string& what, const std::string& log) {
  static const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  int found = 0;
  for (std::sregex_iterator it(log.begin(), log.end(), spill), end; it != end; ++it) {
    ++found;
    BOOST_CHECK_MESSAGE((*it)[1] == "0" && (*it)[2] == "0", what << ": ptxas reports spills: " << it->str());
  }
  return found;
}

}  // namespace dgemm_test
