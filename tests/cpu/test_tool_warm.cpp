// `deepgemm warm` as a user reads it: --json's summary of the kernels it compiled, and one progress
// line per kernel on stderr. It compiles, so it needs a CUDA build and NVRTC: without either the
// executable reports itself skipped (exit 77), never passed.
#include <boost/test/unit_test.hpp>

#ifndef DGEMM_WITH_CUDA
#include "common/skip.hpp"
DGEMM_SKIP_WITHOUT_CUDA()
#else
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/nvrtc_checks.hpp"
#include "common/tool_run.hpp"

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

using dgemm_test::RequireNvrtc;
using dgemm_test::RequireTool;
BOOST_TEST_GLOBAL_FIXTURE(RequireTool);
BOOST_TEST_GLOBAL_FIXTURE(RequireNvrtc);

BOOST_AUTO_TEST_CASE(warm_reports_progress_and_json) {
  using dgemm_test::sh;
  const auto dir = std::filesystem::temp_directory_path() / ("dgemm_warm_" + std::to_string(::getpid()));
  const std::string cmd = "DEEPGEMM_CACHE_DIR=" + dir.string() + " " + dgemm_test::tool() +
                          " warm --arch h200 --runners-up 0 --m 1 --n 4096 --k 4096 --trans-b";
  dgemm_test::Result r = sh(cmd + " --json", false);
  BOOST_TEST(r.rc == 0, r.out);
  for (const char* key : {"\"hardware\": \"NVIDIA H200", "\"plans\": 1", "\"failed\": 0", "\"compiled\": [",
                          "\"seconds\": "})
    BOOST_TEST(has(r.out, key), "missing " << key << " in:\n" << r.out);
  r = sh("(" + cmd + " 2>&1 >/dev/null)");  // progress goes to stderr: one line per kernel when not a terminal
  BOOST_TEST(has(r.out, "warm: [1/"), r.out);
  BOOST_TEST(has(r.out, "s elapsed: "), r.out);
  std::filesystem::remove_all(dir);
}

// --force compiles what a benchmark's --force-kernel NAME runs: a measuring-only configuration
// (never chosen by the planner) lands in the JSON; a name that is neither a family nor a
// configuration is a usage error naming it.
BOOST_AUTO_TEST_CASE(warm_force_compiles_the_named_configuration) {
  using dgemm_test::sh;
  const auto dir = std::filesystem::temp_directory_path() / ("dgemm_warm_force_" + std::to_string(::getpid()));
  const std::string cmd = "DEEPGEMM_CACHE_DIR=" + dir.string() + " " + dgemm_test::tool() +
                          " warm --arch h200 --runners-up 0 --m 1 --n 8192 --k 8192 --trans-b --json --force ";
  dgemm_test::Result r = sh(cmd + "sm90_64x8x64_s6_t256_b4_swap_p", false);
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "sm90_64x8x64_s6_t256_b4_swap_p"), r.out);
  BOOST_TEST(has(r.out, "\"failed\": 0"), r.out);
  r = sh("(" + cmd + "nonsense 2>&1)", false);
  BOOST_TEST(r.rc == 2, r.out);
  BOOST_TEST(has(r.out, "--force = 'nonsense'"), r.out);
  std::filesystem::remove_all(dir);
}
#endif
