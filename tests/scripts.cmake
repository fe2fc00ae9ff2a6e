# Tests driven by scripts rather than Boost.Test executables. Included by tests/CMakeLists.txt.

# --- ABI: the exported dynamic symbols must be exactly the DGEMM_1.0 list of the version script.
add_test(NAME abi_symbols
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_abi_symbols.sh
          $<TARGET_FILE:deepgemm> ${PROJECT_SOURCE_DIR}/src/api/deepgemm.map)
set_tests_properties(abi_symbols PROPERTIES LABELS cpu)

# --- Runtime dependencies: the library needs only the system C/C++ runtime (DESIGN.md).
add_test(NAME runtime_deps
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_runtime_deps.sh $<TARGET_FILE:deepgemm>)
set_tests_properties(runtime_deps PROPERTIES LABELS cpu)

# --- BEGIN packaging (bindings/packaging engineer; tests/packaging/) -------------------------
# Stages `cmake --install` of this build, then builds and runs the pkg-config, find_package and
# dlopen consumers, the ctypes loader and the no-CUDA-toolkit load check against that stage.
find_package(Python3 COMPONENTS Interpreter)
add_test(NAME packaging
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/packaging/run_all.sh ${PROJECT_BINARY_DIR} ${PROJECT_BINARY_DIR}/packaging)
# With the bindings built, the Rust crates are also built against the stage (through pkg-config).
set(_dgemm_packaging_env "CC=${CMAKE_C_COMPILER}" "PYTHON=${Python3_EXECUTABLE}")
# With a binding switched on, it is also consumed from the stage the way its users do.
if(DGEMM_BUILD_BINDINGS OR DGEMM_BUILD_GO)
  find_program(GO_EXECUTABLE go REQUIRED)  # the same cache entry bindings/CMakeLists.txt uses
  list(APPEND _dgemm_packaging_env DGEMM_PACKAGING_GO=1 "GO=${GO_EXECUTABLE}")
endif()
if(DGEMM_BUILD_BINDINGS OR DGEMM_BUILD_RUST)
  find_program(CARGO_EXECUTABLE cargo HINTS $ENV{HOME}/.cargo/bin REQUIRED)
  list(APPEND _dgemm_packaging_env DGEMM_PACKAGING_RUST=1 "CARGO=${CARGO_EXECUTABLE}")
endif()
set_tests_properties(packaging PROPERTIES LABELS cpu TIMEOUT 600 ENVIRONMENT "${_dgemm_packaging_env}")
# --- END packaging ---------------------------------------------------------------------------

# --- The benchmark report: the committed example rendered (render.py, and deepgemm-bench --render
# when the benchmark is built) and drawn by headless Chromium, whose screenshot must not be blank.
add_test(NAME bench_report
  COMMAND ${PROJECT_SOURCE_DIR}/bench/report/check_report.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/bench-report
          $<$<TARGET_EXISTS:deepgemm_bench>:$<TARGET_FILE:deepgemm_bench>>)
set_tests_properties(bench_report PROPERTIES LABELS cpu SKIP_RETURN_CODE 77 TIMEOUT 300
  ENVIRONMENT "PYTHON=${Python3_EXECUTABLE}")

# --- ABI baseline: the DGEMM_1.0 functions and the types they reach, recorded with libabigail's
# abidw in tests/abi and compared with abidiff (tests/scripts/check_abi_baseline.sh). abidw reads
# debug info, which the shipped library has none of: this probe is the same library (same
# objects, same version script) with its C boundary (src/api/*.cpp) compiled again with -g.
file(GLOB _dgemm_api_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/api/*.cpp)
add_library(deepgemm_abi_probe SHARED ${_dgemm_api_sources}
            "$<FILTER:$<TARGET_OBJECTS:deepgemm_objects>,EXCLUDE,/api/[^/]*$>")
target_include_directories(deepgemm_abi_probe PRIVATE $<TARGET_PROPERTY:deepgemm_objects,INCLUDE_DIRECTORIES>)
target_compile_definitions(deepgemm_abi_probe PRIVATE $<TARGET_PROPERTY:deepgemm_objects,COMPILE_DEFINITIONS>)
target_compile_options(deepgemm_abi_probe PRIVATE -g -O0 -fopenmp)
set_target_properties(deepgemm_abi_probe PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                      LINK_DEPENDS ${PROJECT_SOURCE_DIR}/src/api/deepgemm.map)
target_link_libraries(deepgemm_abi_probe PRIVATE $<TARGET_PROPERTY:deepgemm,LINK_LIBRARIES>)
target_link_options(deepgemm_abi_probe PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/src/api/deepgemm.map)
add_test(NAME abi_baseline
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_abi_baseline.sh $<TARGET_FILE:deepgemm_abi_probe>
          ${CMAKE_CURRENT_SOURCE_DIR}/abi ${PROJECT_SOURCE_DIR}/include/deepgemm)
set_tests_properties(abi_baseline PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
