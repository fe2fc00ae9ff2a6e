// Subcommands of the `deepgemm` command-line tool; main.cpp dispatches on the first argument.
// Each takes the arguments after the subcommand name and returns the process exit code.
#pragma once

namespace dgemm::tools {

int cmd_run(int argc, char** argv);   // plan + execute one GEMM, report time and error vs the CPU oracle
int cmd_plan(int argc, char** argv);  // print the planner's decision and why, on any machine
int cmd_gen(int argc, char** argv);   // write the specialised kernel source (.cuh) for nvcc users
int cmd_warm(int argc, char** argv);  // compile the kernels a machine's plans use into the kernel cache

// Exit codes of every subcommand, distinct so that scripts can tell the cases apart. A usage error
// is a bad flag or a problem the library rejects as an invalid argument; "unsupported" is a valid
// problem this build or device cannot run (DGEMM_STATUS_NOT_SUPPORTED, NO_DEVICE).
constexpr int kExitOk = 0;
constexpr int kExitCheckFailed = 1;  // it ran, and the result failed its check (run: error over the threshold)
constexpr int kExitUsage = 2;
constexpr int kExitUnsupported = 3;
constexpr int kExitError = 4;        // any other failure (device, compiler, file, internal error)

// The lines --help prints about the codes above.
const char* exit_codes_help();

}  // namespace dgemm::tools
