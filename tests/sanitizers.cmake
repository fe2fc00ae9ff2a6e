# Sanitizers, two ways (included by the top-level CMakeLists.txt, before the library).
#
# DGEMM_SANITIZE=<list> (e.g. "address,undefined" or "thread") compiles and links this whole build
# with those sanitizers; the first report ends the process (-fno-sanitize-recover). With clang and
# its libFuzzer the code is also instrumented for coverage, so tests/fuzz builds real fuzzers.
#
# DGEMM_SANITIZER_TIER=ON (the README's test command sets it) builds two such copies of this
# source tree inside this build and runs their tests as two tests of this one:
#   sanitize-address/  ASan + UBSan, with clang when present: the library, the tool, the CPU
#                      tests (all but the allocation counter, which interposes malloc) and the
#                      fuzz targets, each fuzzed for DGEMM_FUZZ_SECONDS (corpus replay without clang);
#   sanitize-thread/   TSan: the library and tests/cpu/test_threads.cpp, with one OpenMP thread
#                      (the OpenMP runtime is not instrumented, so TSan would flag its own
#                      synchronization). Checked once by hand: removing the plan cache's lock
#                      makes it report the race.
# Both build without CUDA, bindings, benchmarks and the cuBLAS drop-in: what they watch is the
# library's host code.

set(DGEMM_SANITIZE "" CACHE STRING "Sanitizers for this whole build, e.g. address,undefined or thread")
option(DGEMM_SANITIZER_TIER "Also build and run ASan+UBSan and TSan copies of the library and its CPU tests" OFF)
set(DGEMM_FUZZ_SECONDS 60 CACHE STRING "libFuzzer time budget per fuzz target in the test run")

# libFuzzer (clang with its compiler-rt, e.g. Debian's libclang-rt-14-dev) or not.
set(DGEMM_HAVE_LIBFUZZER OFF)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
  check_cxx_source_compiles("extern \"C\" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }"
                            DGEMM_LIBFUZZER_LINKS)
  unset(CMAKE_REQUIRED_FLAGS)
  set(DGEMM_HAVE_LIBFUZZER ${DGEMM_LIBFUZZER_LINKS})
endif()

if(DGEMM_SANITIZE)
  add_compile_options(-fsanitize=${DGEMM_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${DGEMM_SANITIZE})
  # Tests that time themselves or limit memory know they are instrumented (clang 14 defines no
  # __SANITIZE_ADDRESS__).
  add_compile_definitions(DGEMM_SANITIZED=1)
  if(DGEMM_HAVE_LIBFUZZER AND NOT DGEMM_SANITIZE MATCHES "thread")
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
endif()

if(DGEMM_SANITIZER_TIER AND NOT DGEMM_SANITIZE)
  include(ExternalProject)
  find_program(DGEMM_CLANG_C clang)
  find_program(DGEMM_CLANG_CXX clang++)
  set(_dgemm_asan_compilers "")
  if(DGEMM_CLANG_C AND DGEMM_CLANG_CXX)
    set(_dgemm_asan_compilers -DCMAKE_C_COMPILER=${DGEMM_CLANG_C} -DCMAKE_CXX_COMPILER=${DGEMM_CLANG_CXX})
  else()
    message(STATUS "sanitizer tier: no clang; ASan+UBSan with ${CMAKE_CXX_COMPILER_ID}, fuzz corpora replayed, not fuzzed")
  endif()
  set(_dgemm_tier_args -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDGEMM_WITH_CUDA=OFF -DDGEMM_BUILD_BINDINGS=OFF
                       -DDGEMM_BUILD_PYTHON=OFF -DDGEMM_BUILD_GO=OFF -DDGEMM_BUILD_RUST=OFF -DDGEMM_BUILD_BENCH=OFF
                       -DDGEMM_BUILD_CUBLAS_COMPAT=OFF -DBUILD_TESTING=ON -DDGEMM_FUZZ_SECONDS=${DGEMM_FUZZ_SECONDS})
  # Each copy builds with two jobs and in the console pool, one after the other, so that the
  # tier does not multiply the parallelism of the outer build.
  ExternalProject_Add(dgemm_sanitize_address
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${PROJECT_BINARY_DIR}/sanitize-address
    CMAKE_ARGS ${_dgemm_asan_compilers} ${_dgemm_tier_args} -DDGEMM_SANITIZE=address,undefined
    BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> -j 2
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON
    USES_TERMINAL_CONFIGURE ON
    USES_TERMINAL_BUILD ON)
  ExternalProject_Add(dgemm_sanitize_thread
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${PROJECT_BINARY_DIR}/sanitize-thread
    CMAKE_ARGS ${_dgemm_asan_compilers} ${_dgemm_tier_args} -DDGEMM_SANITIZE=thread -DDGEMM_BUILD_TOOLS=OFF
    BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> -j 2
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON
    USES_TERMINAL_CONFIGURE ON
    USES_TERMINAL_BUILD ON
    DEPENDS dgemm_sanitize_address)
  add_test(NAME sanitize_address_undefined
    COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${PROJECT_BINARY_DIR}/sanitize-address --output-on-failure)
  add_test(NAME sanitize_thread
    COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${PROJECT_BINARY_DIR}/sanitize-thread --output-on-failure)
  set_tests_properties(sanitize_address_undefined PROPERTIES LABELS "cpu;sanitize" TIMEOUT 2400
    ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1;ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1")
  set_tests_properties(sanitize_thread PROPERTIES LABELS "cpu;sanitize" TIMEOUT 1200
    ENVIRONMENT "OMP_NUM_THREADS=1;TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1")
endif()
