# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs korch as a CMake package: find_package(korch) gives korch::korch, which brings Kokkos.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS korch EXPORT korchTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(_dir backends core pipelines)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(FILES "${PROJECT_BINARY_DIR}/generated/korch/config.hpp" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/korch)
if(TARGET korch_fortran)
  install(TARGETS korch_fortran EXPORT korchTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES "${KORCH_FORTRAN_MODULE_DIR}/korch.mod" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/korch/fortran)
endif()
if(TARGET korch-info)
  install(TARGETS korch-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(_cfgdir ${CMAKE_INSTALL_LIBDIR}/cmake/korch)
install(EXPORT korchTargets NAMESPACE korch:: DESTINATION ${_cfgdir})
configure_package_config_file(cmake/korchConfig.cmake.in
  "${PROJECT_BINARY_DIR}/korchConfig.cmake" INSTALL_DESTINATION ${_cfgdir})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/korchConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/korchConfig.cmake" "${PROJECT_BINARY_DIR}/korchConfigVersion.cmake"
  DESTINATION ${_cfgdir})
