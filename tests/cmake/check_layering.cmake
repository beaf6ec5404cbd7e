# SPDX-License-Identifier: Apache-2.0
# Runs the layering check of cmake/KareusModule.cmake on a fixture (tests/data/layering/<case>):
#   cmake -DKAREUS_ROOT=<repo> -DFIXTURE=<case folder> -DMODULE=<name> [-DDEPS=<target>] -P this
# The fixture stands in for the project: its src/<MODULE>/ and include/kareus/<MODULE>/ are scanned.
cmake_minimum_required(VERSION 3.20)
include(${KAREUS_ROOT}/cmake/KareusModule.cmake)
set(PROJECT_SOURCE_DIR ${FIXTURE})
set(CMAKE_CURRENT_SOURCE_DIR ${FIXTURE}/src/${MODULE})
kareus_check_layering(${MODULE} "${DEPS}")
message(STATUS "kareus: layering of ${MODULE} holds")
