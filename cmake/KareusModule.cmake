# SPDX-License-Identifier: Apache-2.0
# The modules from the bottom of the data flow up. A module may link to, and include the headers
# of, only modules before it; kareus_add_module fails the configuration otherwise, so a cycle or an
# upward dependency (the planner pulling in the runtime's NVML and sockets, say) cannot creep in.
set(KAREUS_LAYERS
  core hardware nvml xgb workload schedule measurement partition executor frontier search store
  kernel_dvfs energylens scaleout runtime planner calibration plan_dir report capi)
# Modules that only the front ends (apps, the C API's callers, bench, tests) may use: no other
# module links to them or includes their headers, so the planner's build and behaviour never
# depend on the inference energy model or the kernel-level DVFS study.
set(KAREUS_LEAVES energylens kernel_dvfs)

# Fails unless every kareus module that `name` links to (DEPS) or whose headers its sources and
# public headers include (C and C++ sources and headers, .inc fragments and CUDA files) sits below
# it in KAREUS_LAYERS and is not one of KAREUS_LEAVES.
function(kareus_check_layering name deps)
  list(FIND KAREUS_LAYERS ${name} own)
  if(own EQUAL -1)
    message(FATAL_ERROR "kareus: module ${name} is not in KAREUS_LAYERS (cmake/KareusModule.cmake); "
                        "add it where it sits in the data flow")
  endif()
  set(used)
  foreach(dep ${deps})
    if(dep MATCHES "^kareus::(.+)$")
      list(APPEND used "${CMAKE_MATCH_1}|links to kareus::${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(patterns)
  foreach(ext cpp hpp h inc cu)
    list(APPEND patterns ${CMAKE_CURRENT_SOURCE_DIR}/*.${ext}
         ${PROJECT_SOURCE_DIR}/include/kareus/${name}/*.${ext})
  endforeach()
  file(GLOB_RECURSE files ${patterns})
  foreach(file ${files})
    file(STRINGS ${file} includes REGEX "^#include \"kareus/[a-z_]+/")
    foreach(line ${includes})
      string(REGEX MATCH "kareus/([a-z_]+)/" _ "${line}")
      file(RELATIVE_PATH where ${PROJECT_SOURCE_DIR} ${file})
      list(APPEND used "${CMAKE_MATCH_1}|${where} includes kareus/${CMAKE_MATCH_1}/")
    endforeach()
  endforeach()
  foreach(entry ${used})
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 module)
    list(GET parts 1 what)
    if(module STREQUAL name)
      continue()
    endif()
    if(module IN_LIST KAREUS_LEAVES)
      list(JOIN KAREUS_LEAVES ", " leaves)
      message(FATAL_ERROR "kareus: module ${name} ${what}, a leaf module (KAREUS_LEAVES: "
                          "${leaves}) that only the front ends may use")
    endif()
    list(FIND KAREUS_LAYERS ${module} theirs)
    if(theirs EQUAL -1 OR theirs GREATER own)
      message(FATAL_ERROR "kareus: upward dependency: module ${name} ${what}, which is not below "
                          "it in KAREUS_LAYERS (${KAREUS_LAYERS})")
    endif()
  endforeach()
endfunction()

# kareus_add_module(<name> [DEPS <targets>...])
# One static library per stage folder: src/<name>/*.cpp with public headers in
# include/kareus/<name>/. Modules link only to modules below them in the data flow.
function(kareus_add_module name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  kareus_check_layering(${name} "${ARG_DEPS}")
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  # A module's cuda/ folder is its own target, built only where the CUDA toolkit is found.
  file(GLOB_RECURSE cuda_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cuda/*.cpp)
  if(cuda_sources)
    list(REMOVE_ITEM sources ${cuda_sources})
  endif()
  if(NOT sources)
    message(STATUS "kareus: module ${name} has no sources yet, skipped")
    return()
  endif()
  add_library(kareus_${name} STATIC ${sources})
  target_include_directories(kareus_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(kareus_${name} PUBLIC ${ARG_DEPS})
  add_library(kareus::${name} ALIAS kareus_${name})
  # Coverage for libFuzzer in the library the fuzz targets link: instrumenting only the targets'
  # own files left the fuzzer blind to the readers' branches (53 edges for hf_config). The tests,
  # the CLI and the daemon in the same tree go without: nothing reads their coverage, and
  # instrumenting them only made them slower to compile and to run.
  if(KAREUS_FUZZ)
    target_compile_options(kareus_${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  set_property(GLOBAL APPEND PROPERTY KAREUS_MODULES kareus_${name})
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/cuda/CMakeLists.txt)
    add_subdirectory(cuda)
  endif()
endfunction()

# kareus_add_test(<name> SOURCES <files>... DEPS <targets>...)
# A GoogleTest executable whose tests ctest discovers one by one.
function(kareus_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_SOURCES)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  # Shared test helpers live in tests/common/.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    KAREUS_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
    KAREUS_TEST_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # Tests keep their measurement stores in the build tree, never in the user's ~/.cache. The label
  # names the executable, so that `ctest -L` runs one executable's tests (scripts/sanitize.sh).
  # One variable per property: gtest_discover_tests hands PROPERTIES on split at every ';', so a
  # two-entry ENVIRONMENT list lost its second entry and tests wrote to the user's ~/.cache.
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120
    PROPERTIES LABELS ${name}
      ENVIRONMENT "KAREUS_DATA_DIR=${PROJECT_SOURCE_DIR}/data"
      ENVIRONMENT_MODIFICATION "XDG_CACHE_HOME=set:${PROJECT_BINARY_DIR}/test-cache")
endfunction()

# kareus_label_tests(<executable> LABEL <label> TESTS <test names>...)
# Adds LABEL to some of an executable's discovered tests, e.g. sanitize_slow, which `make
# ci-extra` leaves out (docs/hardening.md). A name is Suite.Test as gtest lists it; ctest's name of
# a parameterised test goes on with "  # GetParam() = ..." (bytes that change from build to build
# where the parameter has no printer), so a name also labels the tests it begins, up to that space.
# gtest_discover_tests defines the tests when ctest starts, so the label is set by a script that
# ctest includes after the executable's discovery script: one added to the folder's
# TEST_INCLUDE_FILES after kareus_add_test (ctest's set_tests_properties adds to LABELS). A name
# that labels no discovered test stops ctest, so a renamed test is not quietly unlabelled.
function(kareus_label_tests executable)
  cmake_parse_arguments(ARG "" "LABEL" "TESTS" ${ARGN})
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${executable}_${ARG_LABEL}_labels.cmake")
  set(body "")
  foreach(test ${ARG_TESTS})
    string(APPEND body "set(labelled 0)\n"
      "foreach(t IN LISTS ${executable}_TESTS)\n"
      "  string(FIND \"\${t}\" [==[${test}  # ]==] at)\n"
      "  if(t STREQUAL [==[${test}]==] OR at EQUAL 0)\n"
      "    set_tests_properties(\"\${t}\" PROPERTIES LABELS ${ARG_LABEL})\n"
      "    set(labelled 1)\n"
      "  endif()\n"
      "endforeach()\n"
      "if(NOT labelled)\n"
      "  message(FATAL_ERROR [==[${executable}: no test named ${test} to label ${ARG_LABEL}]==])\n"
      "endif()\n")
  endforeach()
  # Until the executable is built there is no list to look in (its tests are one *_NOT_BUILT).
  file(WRITE "${script}" "if(DEFINED ${executable}_TESTS)\n${body}endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()

# kareus_add_cli_test(<name> SOURCES <files>... DEPS <targets>... [USES <targets>...])
# A test that runs the built kareus binary (KAREUS_BINARY) end to end; USES names further
# executables or libraries it runs (their paths are up to the caller to pass).
function(kareus_add_cli_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;USES" ${ARGN})
  kareus_add_test(${name} SOURCES ${ARG_SOURCES} DEPS ${ARG_DEPS})
  target_compile_definitions(${name} PRIVATE KAREUS_BINARY="$<TARGET_FILE:kareus>")
  add_dependencies(${name} kareus ${ARG_USES})
endfunction()

# Adds every immediate subfolder of the current directory that has a CMakeLists.txt.
macro(kareus_add_subfolders)
  file(GLOB _children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT _children)
  foreach(_child ${_children})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${_child}/CMakeLists.txt)
      add_subdirectory(${_child})
    endif()
  endforeach()
endmacro()
