# cmake -DCC=... -DCXX=... -DINCLUDE=... -P barrier_init.cmake
#
# PARK_LATCH_INIT and PARK_BARRIER_INIT accept constants in range and
# refuse to compile anything else: barrier_init.c's case 0 must compile,
# as C11 and as C++17, and each of its other cases must fail, naming the
# initialiser.

set(here ${CMAKE_CURRENT_LIST_DIR})
set(cases 0 1 2 3 4 5 6 7)
set(problems)
foreach(lang c c++)
  if(lang STREQUAL "c")
    set(compiler ${CC})
    set(std -std=c11)
  else()
    set(compiler ${CXX})
    set(std -std=c++17)
  endif()
  foreach(case IN LISTS cases)
    if(case LESS 4)
      set(name PARK_LATCH_INIT)
    else()
      set(name PARK_BARRIER_INIT)
    endif()
    execute_process(
      COMMAND ${compiler} -x ${lang} ${std} -Wall -Wextra -fsyntax-only -I${INCLUDE}
              -DCASE=${case} ${here}/barrier_init.c
      RESULT_VARIABLE rc
      OUTPUT_VARIABLE out
      ERROR_VARIABLE out)
    if(case EQUAL 0)
      if(NOT rc EQUAL 0)
        list(APPEND problems "${lang} case ${case} does not compile:\n${out}")
      endif()
    elseif(rc EQUAL 0)
      list(APPEND problems "${lang} case ${case} compiles")
    elseif(NOT out MATCHES "${name}")
      list(APPEND problems "${lang} case ${case} fails without naming ${name}:\n${out}")
    endif()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n" problems)
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "barrier_init.rejects: case 0 compiles, cases 1-7 do not, in C and C++")
