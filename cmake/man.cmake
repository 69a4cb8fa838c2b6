# Manual pages: park(7), park-run(1), and a section 3 page per public
# header with a link page per public name (`man park_mutex_lock`), made by
# tools/man from the headers' comments and docs/man/ into <build>/man and
# installed under CMAKE_INSTALL_MANDIR. tools/man needs Python 3 (Debian:
# python3); without it the pages are left out, with a message.

option(PARK_MAN "Generate and install the manual pages (needs python3)" ON)
if(NOT PARK_MAN)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "park: no python3: the manual pages are not generated")
  return()
endif()

file(GLOB park_man_inputs CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/include/park/*.h
     ${PROJECT_SOURCE_DIR}/include/park/*.hpp
     ${PROJECT_SOURCE_DIR}/docs/man/*.md)
set(park_man_dir ${PROJECT_BINARY_DIR}/man)
# One stamp for every page: which pages there are depends on the headers.
add_custom_command(
  OUTPUT ${park_man_dir}/stamp
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/man
          --version ${PROJECT_VERSION} --out ${park_man_dir}
          --version-header ${PROJECT_BINARY_DIR}/include/park/version.h
  COMMAND ${CMAKE_COMMAND} -E touch ${park_man_dir}/stamp
  DEPENDS ${park_man_inputs}
          ${PROJECT_SOURCE_DIR}/tools/man
          ${PROJECT_SOURCE_DIR}/lib/preload/park-run.in
          ${PROJECT_BINARY_DIR}/include/park/version.h
  COMMENT "Generating the manual pages"
  VERBATIM)
add_custom_target(park_man ALL DEPENDS ${park_man_dir}/stamp)
install(DIRECTORY ${park_man_dir}/
        DESTINATION ${CMAKE_INSTALL_MANDIR}
        FILES_MATCHING REGEX "/man[137]/[^/]+\\.[137]$")

# Every public function has its comment, and every PARK_* variable that lib/
# reads is documented in park(7).
if(PARK_BUILD_TESTS)
  add_test(NAME man_pages
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/man
                   --version ${PROJECT_VERSION} --check)
  set_tests_properties(man_pages PROPERTIES LABELS packaging TIMEOUT 60)
endif()
