// The `deepgemm` command-line tool: dispatches to its subcommands (src/tools/cmd_*.cpp).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#include "core/error.hpp"
#include "deepgemm/deepgemm.h"
#include "tools/commands.hpp"

namespace dgemm::tools {
const char* exit_codes_help() {
  return "exit status: 0 success; 1 the result failed its check; 2 usage error (a bad flag or an invalid\n"
         "  problem); 3 unsupported (a valid problem this build or device cannot run); 4 other failure\n";
}
}  // namespace dgemm::tools

namespace {
// The exit code of a library error, by its status (see commands.hpp).
int exit_code_for(dgemm::Status s) {
  switch (s) {
    case dgemm::Status::InvalidArgument: return dgemm::tools::kExitUsage;
    case dgemm::Status::NotSupported:
    case dgemm::Status::NoDevice: return dgemm::tools::kExitUnsupported;
    default: return dgemm::tools::kExitError;
  }
}

void usage() {
  std::printf(
      "deepgemm %s - GEMM with fused epilogues\n\n"
      "usage: deepgemm <command> [flags]\n"
      "  run    plan and execute one GEMM (GPU when present, else CPU); print the plan, time,\n"
      "         TFLOP/s and the error against the CPU oracle\n"
      "  plan   print the planner's decision and why, for any machine (--arch)\n"
      "  gen    write the specialised kernel source for ahead-of-time nvcc builds\n"
      "  warm   compile the kernels plans for a machine use into the kernel cache (no GPU needed)\n"
      "  <command> --help for its flags\n"
      "%s",
      dgemm_version_string(), dgemm::tools::exit_codes_help());
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? dgemm::tools::kExitUsage : dgemm::tools::kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("%s\n", dgemm_version_string());
    return 0;
  }
  try {
    if (!std::strcmp(argv[1], "run")) return dgemm::tools::cmd_run(argc - 2, argv + 2);
    if (!std::strcmp(argv[1], "plan")) return dgemm::tools::cmd_plan(argc - 2, argv + 2);
    if (!std::strcmp(argv[1], "gen")) return dgemm::tools::cmd_gen(argc - 2, argv + 2);
    if (!std::strcmp(argv[1], "warm")) return dgemm::tools::cmd_warm(argc - 2, argv + 2);
  } catch (const dgemm::Error& e) {
    std::fprintf(stderr, "deepgemm %s: %s\n", argv[1], e.what());
    return exit_code_for(e.status());
  } catch (const std::invalid_argument& e) {  // the flag parsers' errors: they name the flag and the value
    std::fprintf(stderr, "deepgemm %s: %s (see deepgemm %s --help)\n", argv[1], e.what(), argv[1]);
    return dgemm::tools::kExitUsage;
  } catch (const std::bad_alloc&) {  // said plainly, not as "std::bad_alloc"
    std::fprintf(stderr, "deepgemm %s: out of host memory (the problem's buffers do not fit this machine)\n", argv[1]);
    return dgemm::tools::kExitError;
  } catch (const std::length_error&) {  // a buffer larger than any allocation can be
    std::fprintf(stderr, "deepgemm %s: out of host memory (the problem's buffers do not fit this machine)\n", argv[1]);
    return dgemm::tools::kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepgemm %s: %s\n", argv[1], e.what());
    return dgemm::tools::kExitError;
  }
  std::fprintf(stderr, "deepgemm: unknown command '%s'\n", argv[1]);
  usage();
  return dgemm::tools::kExitUsage;
}
