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
