// The `deepgemm` command-line tool: dispatches to its subcommands (src/tools/cmd_*.cpp).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#include "deepgemm/deepgemm.h"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace {
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
      "exit status: 0 success; 1 the command failed (a check above its threshold, a library or\n"
      "  device error, nothing to do); 2 a bad command line (the message names the flag and the\n"
      "  value); 3 out of host memory (e.g. operands too large for this machine)\n",
      dgemm_version_string());
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 2 : 0;
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
  } catch (const std::invalid_argument& e) {  // the flags' errors: they name the flag and the value
    std::fprintf(stderr, "deepgemm %s: %s\n", argv[1], e.what());
    return dgemm::tools::kExitUsage;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "deepgemm %s: out of host memory (the problem's buffers do not fit this machine)\n", argv[1]);
    return dgemm::tools::kExitOutOfMemory;
  } catch (const std::length_error&) {  // a buffer larger than any allocation can be
    std::fprintf(stderr, "deepgemm %s: out of host memory (the problem's buffers do not fit this machine)\n", argv[1]);
    return dgemm::tools::kExitOutOfMemory;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepgemm %s: %s\n", argv[1], e.what());
    return dgemm::tools::kExitFailure;
  }
  std::fprintf(stderr, "deepgemm: unknown command '%s'\n", argv[1]);
  usage();
  return 2;
}
