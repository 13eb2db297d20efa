# cmake --install: headers, libraries and a CMake package, so that a consumer writes
#   find_package(vkpack REQUIRED)
#   target_link_libraries(app PRIVATE vkpack::vkpack)
include(CMakePackageConfigHelpers)
set(config_dir "${CMAKE_INSTALL_LIBDIR}/cmake/vkpack")
# The umbrella header; the folders' public headers come with their libraries
# (vkpack_library, VKPACK_PRIVATE_HEADERS).
install(FILES "${PROJECT_SOURCE_DIR}/vkpack/vkpack.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/vkpack")
install(EXPORT vkpackTargets NAMESPACE vkpack:: DESTINATION "${config_dir}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/vkpackConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/vkpackConfig.cmake" INSTALL_DESTINATION "${config_dir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/vkpackConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/vkpackConfig.cmake" "${PROJECT_BINARY_DIR}/vkpackConfigVersion.cmake"
  DESTINATION "${config_dir}")
