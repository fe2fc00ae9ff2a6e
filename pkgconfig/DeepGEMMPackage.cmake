# The CMake package of an installed DeepGEMM: DeepGEMMConfig.cmake, its version file and the
# exported target DeepGEMM::deepgemm (the install(TARGETS deepgemm EXPORT DeepGEMMTargets) lives in
# src/CMakeLists.txt). Included from the top-level CMakeLists.txt; lives beside deepgemm.pc.in
# because both describe the installed library to its consumers.
include(CMakePackageConfigHelpers)

set(DGEMM_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/DeepGEMM)

install(EXPORT DeepGEMMTargets
  NAMESPACE DeepGEMM::
  FILE DeepGEMMTargets.cmake
  DESTINATION ${DGEMM_CMAKE_INSTALL_DIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/DeepGEMMConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/DeepGEMMConfig.cmake
  INSTALL_DESTINATION ${DGEMM_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)

# 1.x releases only add to the ABI (new version nodes), so any 1.y >= the requested 1.x will do.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/DeepGEMMConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)

install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/DeepGEMMConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/DeepGEMMConfigVersion.cmake
  DESTINATION ${DGEMM_CMAKE_INSTALL_DIR})

# deepgemm.pc finds its prefix relative to its own location, so a staged or relocated install
# (`cmake --install build --prefix /some/stage`, a distro package built in a DESTDIR) works with a
# plain `pkg-config --cflags --libs deepgemm`.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(DGEMM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _dgemm_pc_up "/_p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_p")
  string(REGEX REPLACE "/$" "" _dgemm_pc_up "${_dgemm_pc_up}")
  set(DGEMM_PC_PREFIX "\${pcfiledir}/${_dgemm_pc_up}")
endif()
