#!/bin/sh
# tests/preload/check_run.sh PARK_RUN PRELOAD_LIB PROGRAM CLOSES_STDERR
#
# park-run and the library's interface: park-run appends the library to
# LD_PRELOAD; PARK_PRELOAD_VERBOSE=1 prints exactly one report line at exit,
# also when the program closed its standard error, or into PARK_PRELOAD_LOG;
# the library defines every pthread_mutex/cond/rwlock and sem_* function
# it serves under every version glibc defines it with, and nothing else.
set -eu
run=$1 lib=$2 prog=$3 closes=$4
fail() { echo "FAIL: $*" >&2; exit 1; }

# No command: usage, exit 2.
rc=0; "$run" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "park-run without a command exits $rc, not 2"

# LD_PRELOAD: set when empty, appended otherwise.
got=$(LD_PRELOAD= "$run" sh -c 'printf %s "$LD_PRELOAD"')
[ "$got" = "$lib" ] || fail "LD_PRELOAD is '$got', not '$lib'"
got=$(LD_PRELOAD=$lib "$run" sh -c 'printf %s "$LD_PRELOAD"')
[ "$got" = "$lib:$lib" ] || fail "LD_PRELOAD is '$got', not appended"

# The report: one line, in this form.
out=$(PARK_PRELOAD_VERBOSE=1 "$run" "$prog" mutex_static_initializers_lock_and_unlock \
    cond_with_robust_mutex_passes_through_as_a_whole 2>&1 >/dev/null | grep '^park-preload:' || true)
n=$(printf '%s\n' "$out" | grep -c '^park-preload:' || true)
[ "$n" -eq 1 ] || fail "$n report lines: $out"
num='[0-9][0-9]*'
form="^park-preload: mutexes $num managed, $num passed through; conds $num managed, $num passed through; rwlocks $num managed, $num passed through; sems $num managed, $num passed through\$"
printf '%s\n' "$out" | grep -q "$form" || fail "report line: $out"
printf '%s\n' "$out" | grep -q "mutexes [1-9][0-9]* managed, [1-9][0-9]* passed through" ||
    fail "report does not count the managed and the robust mutexes: $out"
# ... and none without PARK_PRELOAD_VERBOSE.
out=$("$run" "$prog" mutex_static_initializers_lock_and_unlock 2>&1 >/dev/null | grep -c '^park-preload:' || true)
[ "$out" -eq 0 ] || fail "a report without PARK_PRELOAD_VERBOSE"

# A program that closes its standard error before it exits still gets its
# report (on the copy taken at load time), and PARK_PRELOAD_LOG sends it to
# a file instead.
n=$(PARK_PRELOAD_VERBOSE=1 "$run" "$closes" 2>&1 >/dev/null |
    grep -c '^park-preload: mutexes' || true)
[ "$n" -eq 1 ] || fail "$n report lines from a program that closed its standard error"
log=$(mktemp "${TMPDIR:-/tmp}/park-preload-log.XXXXXX")
trap 'rm -f "$log"' EXIT
out=$(PARK_PRELOAD_VERBOSE=1 PARK_PRELOAD_LOG=$log "$run" "$closes" 2>&1 >/dev/null)
[ -z "$out" ] || fail "PARK_PRELOAD_LOG set, yet on standard error: $out"
n=$(grep -c '^park-preload: mutexes' "$log" || true)
[ "$n" -eq 1 ] || fail "$n report lines in PARK_PRELOAD_LOG: $(cat "$log")"

# Symbol versions: for every function the preload defines, the same
# versions as libc.so.6 (objdump -T prints "(VER)" for a compat version).
libc=$(ldd "$prog" | awk '/libc\.so\.6/ { print $3 }')
[ -r "$libc" ] || fail "libc.so.6 of $prog not found"
defs() { objdump -T "$1" | awk '$2 == "g" && $4 != "*UND*" && NF >= 7 { print $(NF), $(NF-1) }' |
    tr -d '()' | sort -u; }
ours=$(defs "$lib" | grep -v ' GLIBC_[0-9.]*$' || true)
mine=$(defs "$lib" | awk '$1 ~ /^(pthread_|sem_)/')
names=$(printf '%s\n' "$mine" | awk '{ print $1 }' | sort -u)
theirs=$(defs "$libc" | awk -v names="$(echo $names)" \
    'BEGIN { n = split(names, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 } $1 in want')
[ "$mine" = "$theirs" ] || fail "symbol versions differ from libc's:
preload:
$mine
libc:
$theirs"
extra=$(objdump -T "$lib" | awk '$2 == "g" && $4 != "*UND*" && $NF !~ /^GLIBC_/ && $(NF) !~ /^(pthread_|sem_)/ { print $NF }')
[ -z "$extra" ] || fail "exports beyond pthread and sem functions: $extra"
count=$(printf '%s\n' "$names" | wc -l)
[ "$count" -eq 33 ] || fail "$count functions defined, 33 expected: $names"
echo "park-run, report and symbol versions: ok"
