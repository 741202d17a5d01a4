# CPack: `cpack -G DEB` in a build directory (or `cmake --build BUILD --target package`) makes
# easyplan_<version>_<arch>.deb from what cmake/install.cmake installs, under /usr. The runtime
# dependencies come from dpkg-shlibdeps (the binary's shared libraries: fmt, mimalloc, libstdc++; RE2
# and yaml-cpp are linked from their archives). The C++ library's headers include nlohmann/json, fmt,
# yaml-cpp and RE2 headers, hence the -dev packages as Recommends: the CLI does not need them.
set(EASYPLAN_PACKAGE_MAINTAINER "easyplan maintainers <maintainers@easyplan.invalid>" CACHE STRING
    "Maintainer field of the .deb (name <email>)")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME easyplan)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR easyplan)
set(CPACK_PACKAGE_CONTACT "${EASYPLAN_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "configuration compiler and sharding planner for large-model training")
set(CPACK_PACKAGE_DESCRIPTION
    "easyplan resolves a HuggingFace-style config.json the way transformers and EasyDeL do, builds the\n"
    "model's parameter tree and plans its sharding on a device mesh (dp, fsdp, ep, tp, sp), in\n"
    "milliseconds and without accelerators. This package holds the easyplan command and its C++ library\n"
    "(headers, static libraries and find_package(easyplan) files).")
string(JOIN "" CPACK_PACKAGE_DESCRIPTION ${CPACK_PACKAGE_DESCRIPTION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the binary only: install(TARGETS) never strips static archives

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${EASYPLAN_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
find_program(EASYPLAN_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(EASYPLAN_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  message(STATUS "dpkg-shlibdeps not found: the .deb will declare no runtime dependencies")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "nlohmann-json3-dev, libfmt-dev, libyaml-cpp-dev, libre2-dev, pkg-config")

include(CPack)
