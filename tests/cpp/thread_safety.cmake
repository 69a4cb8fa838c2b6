# cmake -DCLANGXX=... -DINCLUDE=... -P thread_safety.cmake
#
# Clang's -Wthread-safety understands park/park.hpp's annotations:
# thread_safety.cpp's case 0 (correct locking) compiles without a warning,
# and each of its other cases (a locking mistake) is reported.

set(here ${CMAKE_CURRENT_LIST_DIR})
set(cases 0 1 2 3 4 5)
set(problems)
foreach(std c++17 c++20)
  foreach(case IN LISTS cases)
    # The mistakes once (C++17); the correct case in both, coroutines included.
    if(std STREQUAL "c++20" AND NOT case EQUAL 0)
      continue()
    endif()
    execute_process(
      COMMAND ${CLANGXX} -x c++ -std=${std} -Wall -Wextra -Wthread-safety -Werror -fsyntax-only
              -I${INCLUDE} -DCASE=${case} ${here}/thread_safety.cpp
      RESULT_VARIABLE rc
      OUTPUT_VARIABLE out
      ERROR_VARIABLE out)
    if(case EQUAL 0)
      if(NOT rc EQUAL 0)
        list(APPEND problems "${std} case ${case} does not compile:\n${out}")
      endif()
    elseif(rc EQUAL 0)
      list(APPEND problems "${std} case ${case} compiles: the analysis missed it")
    elseif(NOT out MATCHES "-Wthread-safety")
      list(APPEND problems "${std} case ${case} fails for another reason:\n${out}")
    endif()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n" problems)
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "cpp_thread_safety: case 0 compiles (C++17, C++20), cases 1-5 are reported")
