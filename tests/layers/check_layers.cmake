# cmake -DROOT=<source dir> -P check_layers.cmake
#
# Keeps lib/ layered: a file may include headers of its own layer and of
# the layers below it, never above. Fails naming every include that breaks
# the rule, every lib/ file the table below does not place, and every
# quoted include that resolves to no layer.

# --- the layers -------------------------------------------------------------

# Bottom up: prim is the primitives, extras the drop-in (preload/) built on
# them. The profiler (profile/) sits right above os: lib/wait records every
# wait with it. "base", below them all, holds the public headers every layer
# may use.
set(park_layers os profile wait pool task async prim extras)

# Where each file under lib/ lives, as <pattern> <layer> pairs; the first
# match wins. A pattern ending in / is a folder; * matches within one name
# (so *.c is a file directly in lib/). A new folder must be added here.
set(park_lib_places
  os/       os
  wait/     wait
  pool/     pool
  task/     task
  async.c   async
  async.h   async
  preload/  extras
  profile/  profile
  *.c       prim  # one primitive per file, and its helpers (chan_*.c)
  *.h       prim
)

# Public headers, <park/X.h>.
set(park_public_places
  common.h  base
  time.h    base
  version.h base
  profile.h base
  order.h   base
  pool.h    pool
  task.h    task
  mutex.h   prim
  cond.h    prim
  sem.h     prim
  event.h   prim
  barrier.h prim
  rwlock.h  prim
  lazy.h    prim
  chan.h    prim
  park.h    prim
)

# --- the check --------------------------------------------------------------

if(NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> -P check_layers.cmake")
endif()
get_filename_component(ROOT ${ROOT} ABSOLUTE)
set(lib ${ROOT}/lib)

# The rank of a layer: its index in park_layers, -1 for base.
function(layer_rank layer out)
  if(layer STREQUAL "base")
    set(${out} -1 PARENT_SCOPE)
  else()
    list(FIND park_layers ${layer} rank)
    set(${out} ${rank} PARENT_SCOPE)
  endif()
endfunction()

# The layer of <path> (relative to lib/) by park_lib_places, or "".
function(lib_layer path out)
  set(places ${park_lib_places})
  while(places)
    list(POP_FRONT places pattern layer)
    string(REPLACE "." "\\." re "${pattern}")
    string(REPLACE "*" "[^/]*" re "${re}")
    if(re MATCHES "/$")
      string(APPEND re ".*")
    endif()
    if(path MATCHES "^${re}$")
      set(${out} ${layer} PARENT_SCOPE)
      return()
    endif()
  endwhile()
  set(${out} "" PARENT_SCOPE)
endfunction()

# The layer of <park/name> by park_public_places, or "".
function(public_layer name out)
  set(places ${park_public_places})
  while(places)
    list(POP_FRONT places header layer)
    if(name STREQUAL header)
      set(${out} ${layer} PARENT_SCOPE)
      return()
    endif()
  endwhile()
  set(${out} "" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files RELATIVE ${lib} ${lib}/*.c ${lib}/*.h)
if(NOT files)
  message(FATAL_ERROR "layers: no .c or .h file under ${lib}")
endif()
list(SORT files)

set(problems)
set(n_includes 0)
foreach(file IN LISTS files)
  lib_layer(${file} layer)
  if(layer STREQUAL "")
    list(APPEND problems "lib/${file}: no layer holds it (add its folder to \
the table in tests/layers/check_layers.cmake)")
    continue()
  endif()
  layer_rank(${layer} rank)
  get_filename_component(dir ${file} DIRECTORY)

  file(STRINGS ${lib}/${file} lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
      continue()
    endif()
    set(quoted ${CMAKE_MATCH_1})
    set(name ${CMAKE_MATCH_2})
    if(quoted STREQUAL "\"")
      set(shown "\"${name}\"")
    else()
      set(shown "<${name}>")
    endif()
    math(EXPR n_includes "${n_includes} + 1")

    # What the include names: a public header, a lib/ file, or the system.
    set(used "")
    if(name MATCHES "^park/(.*)$")
      public_layer("${CMAKE_MATCH_1}" used)
      if(used STREQUAL "")
        list(APPEND problems "lib/${file} includes ${shown}: no layer holds \
this public header (add it to the table in tests/layers/check_layers.cmake)")
        continue()
      endif()
    elseif(quoted STREQUAL "\"" OR EXISTS ${lib}/${name})
      # As the compiler does: next to the including file first, then lib/.
      if(quoted STREQUAL "\"" AND NOT dir STREQUAL "" AND EXISTS ${lib}/${dir}/${name})
        set(target ${dir}/${name})
      else()
        set(target ${name})
      endif()
      cmake_path(NORMAL_PATH target)
      if(NOT target MATCHES "^\\.\\./")
        lib_layer(${target} used)
      endif()
      if(used STREQUAL "")
        list(APPEND problems "lib/${file} includes ${shown}: it resolves to \
lib/${target}, which no layer holds")
        continue()
      endif()
    else()
      continue() # a system header
    endif()

    layer_rank(${used} used_rank)
    if(used_rank GREATER rank)
      list(APPEND problems "lib/${file} includes ${shown}: layer ${layer} may \
not use layer ${used}")
    endif()
  endforeach()
endforeach()

list(LENGTH files n_files)
string(REPLACE ";" " < " order "${park_layers}")
if(problems)
  foreach(problem IN LISTS problems)
    message("${problem}")
  endforeach()
  list(LENGTH problems n)
  message(FATAL_ERROR "layers: ${n} problem(s) in ${n_files} files \
(bottom up: ${order})")
endif()
message(STATUS "layers: OK, ${n_files} files, ${n_includes} includes, each \
within its layer or below (${order})")
