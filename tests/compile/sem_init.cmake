# cmake -DCC=... -DCXX=... -DINCLUDE=... -P sem_init.cmake
#
# PARK_SEM_INIT and PARK_SEM_INIT_FIFO accept constants in range and refuse
# to compile anything else: sem_init.c's case 0 must compile, as C11 and as
# C++17, and each of its other cases must fail, naming the initialiser.

set(here ${CMAKE_CURRENT_LIST_DIR})
set(cases 0 1 2 3 4 5 6)
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
    execute_process(
      COMMAND ${compiler} -x ${lang} ${std} -Wall -Wextra -fsyntax-only -I${INCLUDE}
              -DCASE=${case} ${here}/sem_init.c
      RESULT_VARIABLE rc
      OUTPUT_VARIABLE out
      ERROR_VARIABLE out)
    if(case EQUAL 0)
      if(NOT rc EQUAL 0)
        list(APPEND problems "${lang} case ${case} does not compile:\n${out}")
      endif()
    elseif(rc EQUAL 0)
      list(APPEND problems "${lang} case ${case} compiles")
    elseif(NOT out MATCHES "PARK_SEM_INIT")
      list(APPEND problems "${lang} case ${case} fails without naming PARK_SEM_INIT:\n${out}")
    endif()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n" problems)
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "sem_init.rejects: case 0 compiles, cases 1-6 do not, in C and C++")
