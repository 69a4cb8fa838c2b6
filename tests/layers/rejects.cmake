# cmake -P rejects.cmake
#
# The layer check must fail on bad/, a tree with one of each mistake, and
# name exactly those: an include from a lower layer up, a public primitive
# used below the primitives, a lib/ file in no layer, and a quoted include
# that resolves to no layer. bad/ is never compiled.

set(here ${CMAKE_CURRENT_LIST_DIR})
execute_process(
  COMMAND ${CMAKE_COMMAND} -DROOT=${here}/bad -P ${here}/check_layers.cmake
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)

set(expected
  "lib/wait/bad.c includes \"pool/pool.h\": layer wait may not use layer pool"
  "lib/pool/p.h includes <park/mutex.h>: layer pool may not use layer prim"
  "lib/stray/x.c: no layer holds it"
  "lib/task/t.h includes \"nowhere/n.h\": it resolves to lib/nowhere/n.h, which no layer holds"
  "layers: 4 problem(s)")

set(missing)
foreach(line IN LISTS expected)
  string(FIND "${out}" "${line}" at)
  if(at EQUAL -1)
    list(APPEND missing "${line}")
  endif()
endforeach()

if(rc EQUAL 0 OR missing)
  list(JOIN missing "\n  " missing)
  message(FATAL_ERROR "the layer check passed bad/ (exit ${rc}) or did not \
name every mistake; missing:\n  ${missing}\nits output:\n${out}")
endif()
message(STATUS "layers.rejects: bad/ fails, naming each of its 4 mistakes")
