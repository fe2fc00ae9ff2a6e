// Subcommands of the `deepgemm` command-line tool; main.cpp dispatches on the first argument.
// Each takes the arguments after the subcommand name and returns the process exit code.
#pragma once

namespace dgemm::tools {

int cmd_run(int argc, char** argv);   // plan + execute one GEMM, report time and error vs the CPU oracle
int cmd_plan(int argc, char** argv);  // print the planner's decision and why, on any machine
int cmd_gen(int argc, char** argv);   // write the specialised kernel source (.cuh) for nvcc users
int cmd_warm(int argc, char** argv);  // compile the kernels a machine's plans use into the kernel cache

}  // namespace dgemm::tools
