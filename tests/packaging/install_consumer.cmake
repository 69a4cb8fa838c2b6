# ctest script (cmake -P) for the install_consumer test: installs the park
# build tree in PARK_BUILD_DIR into a scratch prefix under PARK_WORK_DIR,
# then builds and runs the consumer/ project against that prefix with the
# same generator and compilers, and the consumer program once more through
# pkg-config. Any failure stops the script with an error.

foreach(var PARK_BUILD_DIR PARK_VERSION PARK_WORK_DIR PARK_CONSUMER_DIR PARK_GENERATOR
            PARK_C_COMPILER PARK_CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_consumer.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix ${PARK_WORK_DIR}/prefix)
set(consumer_build ${PARK_WORK_DIR}/consumer-build)
set(pkg_config_build ${PARK_WORK_DIR}/pkg-config-build)

# run(<what> COMMAND...): runs the command, echoing it, and fails the test
# if it fails.
function(run what)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${what} failed (${rc}): ${shown}")
  endif()
endfunction()

# A fresh prefix, so that nothing left from an earlier run can satisfy the
# consumer.
file(REMOVE_RECURSE ${PARK_WORK_DIR})
file(MAKE_DIRECTORY ${PARK_WORK_DIR})

set(config_args)
if(PARK_CONFIG)
  set(config_args --config ${PARK_CONFIG})
endif()
run("install" ${CMAKE_COMMAND} --install ${PARK_BUILD_DIR} --prefix ${prefix} ${config_args})

# --- CMake package ----------------------------------------------------------
set(configure_args
  -S ${PARK_CONSUMER_DIR} -B ${consumer_build}
  -G ${PARK_GENERATOR}
  -D CMAKE_C_COMPILER=${PARK_C_COMPILER}
  -D CMAKE_CXX_COMPILER=${PARK_CXX_COMPILER}
  -D CMAKE_PREFIX_PATH=${prefix}
  -D CMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -D PARK_EXPECTED_VERSION=${PARK_VERSION}
  -D PARK_EXPECTED_PREFIX=${prefix})
if(PARK_MAKE_PROGRAM)
  list(APPEND configure_args -D CMAKE_MAKE_PROGRAM=${PARK_MAKE_PROGRAM})
endif()
if(PARK_CONFIG)
  list(APPEND configure_args -D CMAKE_BUILD_TYPE=${PARK_CONFIG})
endif()
run("configure consumer" ${CMAKE_COMMAND} ${configure_args})
run("build consumer" ${CMAKE_COMMAND} --build ${consumer_build} ${config_args})
# The consumer's own ctest runs each of its programs.
run("run consumer" ${CMAKE_CTEST_COMMAND} --test-dir ${consumer_build} --output-on-failure
    ${config_args})

# --- pkg-config -------------------------------------------------------------
if(NOT PARK_PKG_CONFIG OR NOT EXISTS "${PARK_PKG_CONFIG}")
  message(FATAL_ERROR "pkg-config not found: install it (Debian: pkg-config) and reconfigure")
endif()

# park.pc may sit under lib/ or lib/<multiarch>/: take whichever was installed.
file(GLOB_RECURSE pc_files ${prefix}/park.pc)
list(LENGTH pc_files n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one park.pc under ${prefix}, found: ${pc_files}")
endif()
get_filename_component(pc_dir ${pc_files} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})

execute_process(COMMAND ${PARK_PKG_CONFIG} --modversion park
                OUTPUT_VARIABLE pc_version OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc)
if(NOT rc STREQUAL "0" OR NOT pc_version STREQUAL PARK_VERSION)
  message(FATAL_ERROR "pkg-config --modversion park gave '${pc_version}' (${rc}), "
                      "expected ${PARK_VERSION}")
endif()
execute_process(COMMAND ${PARK_PKG_CONFIG} --cflags --libs park
                OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "pkg-config --cflags --libs park failed (${rc})")
endif()
execute_process(COMMAND ${PARK_PKG_CONFIG} --variable=libdir park
                OUTPUT_VARIABLE pc_libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")

# The consumer starts a thread of its own, hence its own -pthread.
file(MAKE_DIRECTORY ${pkg_config_build})
run("compile with pkg-config"
    ${PARK_C_COMPILER} -std=c11 -pthread "-DPARK_EXPECTED_VERSION=\"${PARK_VERSION}\""
    ${PARK_CONSUMER_DIR}/main.c ${pc_flags} -o ${pkg_config_build}/consumer)
run("run pkg-config consumer"
    ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${pc_libdir} ${pkg_config_build}/consumer)

# park/park.hpp needs C++17 and nothing beyond park's own flags.
run("compile park.hpp with pkg-config"
    ${PARK_CXX_COMPILER} -std=c++17 -pthread ${PARK_CONSUMER_DIR}/main_hpp.cpp ${pc_flags}
    -o ${pkg_config_build}/consumer_hpp)
run("run pkg-config park.hpp consumer"
    ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${pc_libdir} ${pkg_config_build}/consumer_hpp)
