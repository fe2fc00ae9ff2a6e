// Tests whose prerequisite is absent report themselves skipped: the executable exits 77, which
// CTest shows as skipped (SKIP_RETURN_CODE 77 on every test), never as passed.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <cstdlib>

// For the compile tests' builds without CUDA: the whole executable reports itself skipped. It
// exits while static objects are built, before Boost.Test would refuse an empty test tree.
#define DGEMM_SKIP_WITHOUT_CUDA()                                                \
  namespace {                                                                    \
  const int dgemm_skip_without_cuda = [] {                                       \
    std::printf("SKIPPED: built without CUDA (DGEMM_WITH_CUDA): no kernels\n");  \
    std::fflush(stdout);                                                         \
    std::exit(77);                                                               \
    return 0;                                                                    \
  }();                                                                           \
  }
