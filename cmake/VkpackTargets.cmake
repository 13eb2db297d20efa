# vkpack_library(<target> <folder>): the settings every library of vkpack shares: the
# include root (the source root here; include/ and include/vkpack installed, so that
# <vkpack/vkpack.h> and "<folder>/<file>.h" both resolve), warnings, and installation of
# the target and of the folder's public headers (all but internal/) under
# include/vkpack/<folder>.
function(vkpack_library target folder)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/vkpack>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  vkpack_warnings(${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${target})
  install(TARGETS ${target} EXPORT vkpackTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # A layer's internal/ folders are its own (tests/layout checks that no other layer
  # includes them): not installed.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vkpack/${folder}
    FILES_MATCHING PATTERN "*.h" PATTERN internal EXCLUDE)
endfunction()

# Warnings for vkpack's own code; third-party headers come in as SYSTEM includes.
function(vkpack_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wnon-virtual-dtor
      # Vulkan structs are zero-filled by naming only sType: {VK_STRUCTURE_TYPE_...}.
      -Wno-missing-field-initializers)
    # GCC 12 reports std::string concatenation as overlapping memcpy at -O3 (a false
    # positive, GCC bug 105651).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
    if(VKPACK_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
