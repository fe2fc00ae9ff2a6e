// The `deepgemm run` and `deepgemm warm` output as a user reads it: run's short summary (device,
// kernel, time, TFLOP/s, error against the oracle, PASS), the plan's JSON with --explain, one JSON
// object with --json, the documented exit codes (usage 2, unsupported 3), "gelu" meaning the erf
// form as everywhere else, and warm's progress and --json.
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

struct Result {
  int rc = -1;
  std::string out;
};

Result sh(const std::string& cmd, bool with_stderr = true) {
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

std::string tool() {
  const char* bin = std::getenv("DEEPGEMM_TEST_BINARY_DIR");
  return bin ? std::string(bin) + "/src/tools/deepgemm" : std::string();
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool tool_missing() {
  if (!tool().empty() && std::filesystem::exists(tool())) return false;
  BOOST_TEST_MESSAGE("deepgemm tool not found (run through CTest): skipped");
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(run_prints_a_short_summary) {
  if (tool_missing()) return;
  Result r = sh(tool() + " run --device cpu --m 33 --n 17 --k 65 --dtype f32 --bias col --act gelu");
  BOOST_TEST(r.rc == 0, r.out);
  for (const char* line : {"device    CPU reference backend", "kernel    cpu (family cpu; predicted ", "time      ",
                           " TFLOP/s", "error     ", "relative Frobenius vs the CPU oracle, 33 of 33 rows",
                           "result    PASS", "act=gelu_erf"})
    BOOST_TEST(has(r.out, line), "missing '" << line << "' in:\n" << r.out);
  BOOST_TEST(!has(r.out, "\"rejected\""), "the plan's JSON is not part of the summary");
  BOOST_TEST(!has(r.out, "?"), "a summary field was not found in the plan's JSON:\n" << r.out);
  r = sh(tool() + " run --device cpu --m 8 --n 8 --k 8 --act gelu_tanh");
  BOOST_TEST(has(r.out, "act=gelu_tanh"), r.out);
}

BOOST_AUTO_TEST_CASE(run_explains_and_prints_json_on_request) {
  if (tool_missing()) return;
  Result r = sh(tool() + " run --device cpu --m 16 --n 16 --k 16 --explain");
  BOOST_TEST(r.rc == 0);
  BOOST_TEST(has(r.out, "\"chosen\":{"), r.out);
  BOOST_TEST(has(r.out, "result    PASS"), r.out);
  r = sh(tool() + " run --device cpu --m 16 --n 16 --k 16 --dtype f32 --json", false);
  BOOST_TEST(r.rc == 0);
  BOOST_TEST(r.out.front() == '{', r.out);
  for (const char* key : {"\"plan\": {", "\"median_us\": ", "\"tflops\": ", "\"relative_error\": ", "\"rows_checked\": 16",
                          "\"result\": \"PASS\""})
    BOOST_TEST(has(r.out, key), "missing " << key << " in:\n" << r.out);
  BOOST_TEST(!has(r.out, "result    "), "--json prints nothing but the object");
}

BOOST_AUTO_TEST_CASE(exit_codes_are_distinct_and_documented) {
  if (tool_missing()) return;
  Result help = sh(tool() + " run --help");
  BOOST_TEST(help.rc == 0);
  BOOST_TEST(has(help.out, "exit status: 0 success; 1 the result failed its check; 2 usage error"), help.out);
  BOOST_TEST(has(sh(tool() + " --help").out, "3 unsupported"));
  BOOST_TEST(sh(tool() + " run --no-such-flag").rc == 2);
  BOOST_TEST(sh(tool() + " run --dtype f64").rc == 2);
  BOOST_TEST(sh(tool() + " run --device cpu --m 8 --n 8 --k 8 --lda 2").rc == 2);  // INVALID_ARGUMENT
  Result r = sh(tool() + " run --device cpu --m 8 --n 8 --k 8 --dtype f32 --b-dtype f16");
  BOOST_TEST(r.rc == 3, r.out);  // NOT_SUPPORTED
  BOOST_TEST(has(r.out, "NOT_SUPPORTED"), r.out);
  r = sh(tool() + " run --device cuda:99 --m 8 --n 8 --k 8");
  BOOST_TEST(r.rc == 3, r.out);  // NO_DEVICE: no machine has 100 GPUs
  BOOST_TEST(sh(tool() + " nonsense").rc == 2);
}

BOOST_AUTO_TEST_CASE(warm_reports_progress_and_json) {
#ifndef DGEMM_WITH_CUDA
  BOOST_TEST_MESSAGE("built without CUDA: nothing to compile, skipped");
#else
  if (tool_missing()) return;
  const auto dir = std::filesystem::temp_directory_path() / ("dgemm_warm_" + std::to_string(::getpid()));
  const std::string cmd = "DEEPGEMM_CACHE_DIR=" + dir.string() + " " + tool() +
                          " warm --arch h200 --runners-up 0 --m 1 --n 4096 --k 4096 --trans-b";
  Result r = sh(cmd + " --json", false);
  if (r.rc == 3) {
    BOOST_TEST_MESSAGE("NVRTC not available: skipped");
  } else {
    BOOST_TEST(r.rc == 0, r.out);
    for (const char* key : {"\"hardware\": \"NVIDIA H200", "\"plans\": 1", "\"failed\": 0", "\"compiled\": [",
                            "\"seconds\": "})
      BOOST_TEST(has(r.out, key), "missing " << key << " in:\n" << r.out);
    r = sh("(" + cmd + " 2>&1 >/dev/null)");  // progress goes to stderr: one line per kernel when not a terminal
    BOOST_TEST(has(r.out, "warm: [1/"), r.out);
    BOOST_TEST(has(r.out, "s elapsed: "), r.out);
  }
  std::filesystem::remove_all(dir);
#endif
}
