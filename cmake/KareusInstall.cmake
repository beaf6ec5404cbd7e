# SPDX-License-Identifier: Apache-2.0
# `cmake --install` and `make package`: the CLI and kareusd, libkareus.so with kareus.h, a CMake
# package (find_package(Kareus) -> Kareus::kareus) and a pkg-config file, the catalogue and the
# report's charting libraries under share/kareus, the Python package, and kareusd's systemd unit.
# Installed binaries find share/kareus relative to themselves (kareus::installed_share_dir), so the
# tree works under any prefix or DESTDIR.
include(CMakePackageConfigHelpers)

# The .deb's Maintainer field. The default names the project; whoever builds a package to
# distribute sets their own name and address (-DKAREUS_PACKAGE_MAINTAINER="Name <address>").
# ".invalid" is the top-level domain reserved never to resolve (RFC 2606): no address is invented.
set(KAREUS_PACKAGE_MAINTAINER "The Kareus developers <kareus@kareus.invalid>" CACHE STRING
    "Maintainer field of the Debian package: Name <address>")

# Debian's /usr/bin/python3 reads /usr/lib/python3/dist-packages (and /usr/local/lib/python3.X/
# dist-packages); the former is where Debian packages put modules.
set(KAREUS_PYTHON_INSTALL_DIR "lib/python3/dist-packages" CACHE STRING
    "Where the Python package kareus is installed, relative to the prefix")
set(KAREUS_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Kareus")

install(TARGETS kareus kareusd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set_target_properties(kareus_shared PROPERTIES EXPORT_NAME kareus)
install(TARGETS kareus_shared EXPORT KareusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/kareus/kareus.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kareus)
install(EXPORT KareusTargets NAMESPACE Kareus:: DESTINATION ${KAREUS_CMAKE_INSTALL_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/packaging/KareusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/packaging/KareusConfig.cmake
  INSTALL_DESTINATION ${KAREUS_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/packaging/KareusConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/packaging/KareusConfig.cmake
              ${PROJECT_BINARY_DIR}/packaging/KareusConfigVersion.cmake
  DESTINATION ${KAREUS_CMAKE_INSTALL_DIR})

file(RELATIVE_PATH KAREUS_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/packaging/kareus.pc.in
  ${PROJECT_BINARY_DIR}/packaging/kareus.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/kareus.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kareus/data)
# Only what `kareus report` inlines (src/report/chart_library.cpp). Absent until scripts/setup.sh
# has run npm ci; an installed `kareus report` then says how to point it at a copy.
if(EXISTS ${PROJECT_SOURCE_DIR}/web/node_modules/vega-embed/package.json)
  foreach(pkg vega vega-lite vega-embed)
    install(FILES ${PROJECT_SOURCE_DIR}/web/node_modules/${pkg}/package.json
      DESTINATION ${CMAKE_INSTALL_DATADIR}/kareus/node_modules/${pkg})
    install(FILES ${PROJECT_SOURCE_DIR}/web/node_modules/${pkg}/build/${pkg}.min.js
      DESTINATION ${CMAKE_INSTALL_DATADIR}/kareus/node_modules/${pkg}/build)
    # BSD-3-Clause: binary redistributions carry the notice (THIRD_PARTY.md).
    install(FILES ${PROJECT_SOURCE_DIR}/web/node_modules/${pkg}/LICENSE
      DESTINATION ${CMAKE_INSTALL_DATADIR}/kareus/node_modules/${pkg})
  endforeach()
else()
  message(STATUS "kareus: web/node_modules missing (scripts/setup.sh runs npm ci); the installed "
                 "kareus report will need KAREUS_REPORT_JS_DIR")
endif()

# Not in make demo's tree, which is configured without the bindings (KAREUS_BUILD_TESTS=OFF).
if(TARGET kareus_python)
  install(TARGETS kareus_python LIBRARY DESTINATION ${KAREUS_PYTHON_INSTALL_DIR}/kareus)
  file(GLOB _kareus_python_files ${PROJECT_SOURCE_DIR}/python/kareus/*.py)
  install(FILES ${_kareus_python_files} DESTINATION ${KAREUS_PYTHON_INSTALL_DIR}/kareus)
endif()

# The unit names kareusd by its installed path, known only at install time: CPack installs with
# prefix /usr while a plain `cmake --install` uses CMAKE_INSTALL_PREFIX or --prefix.
install(CODE "
  set(_unit_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
  file(READ \"${PROJECT_SOURCE_DIR}/packaging/kareusd.service.in\" _unit)
  string(REPLACE \"@KAREUS_BIN_DIR@\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\" _unit \"\${_unit}\")
  message(STATUS \"Installing: \${_unit_dir}/kareusd.service\")
  file(WRITE \"\${_unit_dir}/kareusd.service\" \"\${_unit}\")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_unit_dir}/kareusd.service\")")

# The licence, the third-party notices and Debian's machine-readable copyright file, where
# Debian looks for them (/usr/share/doc/kareus/copyright; lintian requires it).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${PROJECT_SOURCE_DIR}/NOTICE
              ${PROJECT_SOURCE_DIR}/THIRD_PARTY.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Debian wants a compressed changelog beside it (lintian: no-changelog); the package's history
# is the project's, so the entry names the version and points at the sources.
string(TIMESTAMP _kareus_build_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${PROJECT_BINARY_DIR}/packaging/changelog
  "kareus (${PROJECT_VERSION}) unstable; urgency=medium\n\n"
  "  * Kareus ${PROJECT_VERSION}: see the project's sources for its history.\n\n"
  " -- ${KAREUS_PACKAGE_MAINTAINER}  ${_kareus_build_date}\n")
execute_process(COMMAND gzip -9 -n -c ${PROJECT_BINARY_DIR}/packaging/changelog
                OUTPUT_FILE ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# `make package`: kareus_<version>_<arch>.deb with the same files under /usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kareus)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Energy-optimal GPU execution plans for large-model training")
# Lines under 80 columns, as Debian's control files want them.
set(CPACK_PACKAGE_DESCRIPTION
    "Kareus plans, per pipeline instruction, the GPU SM clock and the overlap of
communication with computation for Megatron-style training jobs, composes them
into the iteration's time-energy frontier, and enforces the chosen schedule at
run time (kareusd). It runs on a GPU emulator calibrated to published
measurements by default, and on NVIDIA GPUs through NVML and CUDA.")
set(CPACK_PACKAGE_CONTACT "${KAREUS_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${KAREUS_PACKAGE_MAINTAINER}")
# Binaries stripped of the RelWithDebInfo tree's line tables and symbols: usr/bin/kareus 27 MB ->
# 3.5 MB, the .deb 16.9 MB -> 3.9 MB. No debug package is built.
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The shared libraries' packages (libxgboost, coinor-libcbc, libsqlite3, ...) come from
# dpkg-shlibdeps; the Python extension is built for Debian's python3.11.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libkareus.so is a public library: a shlibs file for packages that link it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11), python3 (<< 3.12)")
# packaging/triggers runs ldconfig after the library is installed or removed.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/postinst
                                       ${PROJECT_SOURCE_DIR}/packaging/triggers)
include(CPack)
