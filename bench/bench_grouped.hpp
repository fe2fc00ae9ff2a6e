// deepgemm-bench --grouped: grouped (mixture-of-experts) GEMMs against a loop of cuBLAS GEMMs and
// cuBLAS's grouped GEMM (bench_grouped.cpp; options in bench/README.md).
#pragma once

namespace bench {

// The whole mode: parses argv (which holds --grouped), runs, prints; returns the exit status.
int run_grouped(int argc, char** argv);

}  // namespace bench
