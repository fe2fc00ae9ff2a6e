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
if(DGEMM_BUILD_BINDINGS)
  # The same cache entries bindings/CMakeLists.txt requires (this file is read before it).
  find_program(CARGO_EXECUTABLE cargo HINTS $ENV{HOME}/.cargo/bin)
  find_program(BINDGEN_EXECUTABLE bindgen)
  list(APPEND _dgemm_packaging_env DGEMM_PACKAGING_BINDINGS=1 "CARGO=${CARGO_EXECUTABLE}" "BINDGEN=${BINDGEN_EXECUTABLE}")
endif()
set_tests_properties(packaging PROPERTIES LABELS cpu TIMEOUT 600 ENVIRONMENT "${_dgemm_packaging_env}")
# --- END packaging ---------------------------------------------------------------------------
