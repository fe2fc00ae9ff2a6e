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
