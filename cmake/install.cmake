# What `cmake --install` puts under the prefix (README "C++ library"):
#   bin/easyplan                                   the CLI (data files are embedded)
#   include/easyplan/<module>/*.h                  each library module's headers
#   lib/libeasyplan_<module>.a                     the module libraries
#   lib/cmake/easyplan/easyplanConfig.cmake        find_package(easyplan), with its version file and the
#   lib/cmake/easyplan/easyplanTargets*.cmake      exported targets easyplan::<module> and easyplan::easyplan
# Included by the top-level CMakeLists.txt after every module, so it sees each library that exists:
# a new module becomes part of the installed library by being named in easyplan_library_modules.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The library layers, lowest first (docs/ARCHITECTURE.md); cli is the executable's front end and is
# not installed as a library.
set(easyplan_library_modules core schemas rules planner kernels step api)
set(easyplan_config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/easyplan)

install(TARGETS easyplan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(easyplan_installed_targets)
foreach(module ${easyplan_library_modules})
  set(target easyplan_${module})
  if(NOT TARGET ${target})
    continue()
  endif()
  # Headers include each other repo-rooted ("core/status.h"); a consumer writes either that or
  # <easyplan/core/status.h>, so both include/ and include/easyplan/ are on its include path.
  target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/easyplan>)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${module})
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${module}/*.h)
  list(FILTER headers EXCLUDE REGEX "_test[^/]*\\.h$")
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/easyplan/${module})
  list(APPEND easyplan_installed_targets ${target})
endforeach()

# easyplan::easyplan: every installed module plus what they need at link time. The executable already
# owns the target name `easyplan`, hence the different name inside this build.
add_library(easyplan_library INTERFACE)
target_link_libraries(easyplan_library INTERFACE ${easyplan_installed_targets} Threads::Threads)
set_target_properties(easyplan_library PROPERTIES EXPORT_NAME easyplan)
add_library(easyplan::easyplan ALIAS easyplan_library)

install(TARGETS ${easyplan_installed_targets} easyplan_library EXPORT easyplanTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT easyplanTargets NAMESPACE easyplan:: DESTINATION ${easyplan_config_dir})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/easyplanConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/easyplanConfig.cmake INSTALL_DESTINATION ${easyplan_config_dir})
# A 0.x release may break the API at every minor version: then only the same major.minor is compatible.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(easyplan_compatibility SameMinorVersion)
else()
  set(easyplan_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_BINARY_DIR}/easyplanConfigVersion.cmake
                                 COMPATIBILITY ${easyplan_compatibility})
install(FILES ${CMAKE_BINARY_DIR}/easyplanConfig.cmake ${CMAKE_BINARY_DIR}/easyplanConfigVersion.cmake
        DESTINATION ${easyplan_config_dir})
