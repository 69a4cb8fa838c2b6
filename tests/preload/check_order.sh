#!/bin/sh
# tests/preload/check_order.sh PARK_RUN PROGRAM
#
# park-run --check-order on an unmodified pthread program (order_target.c):
# an A-then-B / B-then-A program that never deadlocks is reported once,
# naming both locks and both call sites, and carries on; an rwlock's read
# hold and a mutex taken both ways are reported; a consistent order with
# try-locks against it and a destroyed-and-reused lock are not; with
# PARK_CHECK_ORDER=abort the program stops at the inversion; with
# PARK_CHECK_ORDER=0 nothing is checked. PARK_TEST_LD_PRELOAD as in
# check_profile.sh.
set -eu
run=$1 prog=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
under() {
    if [ -n "${PARK_TEST_LD_PRELOAD:-}" ]; then
        env LD_PRELOAD="$PARK_TEST_LD_PRELOAD" ASAN_OPTIONS=detect_leaks=0 "$@"
    else
        "$@"
    fi
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# --check-order alone checks (a PARK_DEBUG build then aborts at the
# inversion, others carry on).
under "$run" --check-order "$prog" inversion >"$dir/out" 2>"$dir/err" || true
grep -q 'lock-order inversion' "$dir/err" || fail "--check-order: no report"

# The inversion: reported once, with both locks and both sites; with warn
# the program carries on.
PARK_CHECK_ORDER=warn under "$run" --check-order "$prog" inversion >"$dir/out" 2>"$dir/err" ||
    fail "the program failed under --check-order: $(cat "$dir/err")"
cat "$dir/err"
grep -q '^done$' "$dir/out" || fail "the program did not carry on"
n=$(grep -c 'lock-order inversion' "$dir/err" || true)
[ "$n" -eq 1 ] || fail "$n reports, one expected"
grep -q 'a cycle of 2 locks' "$dir/err" || fail "not a cycle of 2 locks"
for want in '(order_lock_a) then 0x[0-9a-f]* (order_lock_b)' \
    '(order_lock_b) then 0x[0-9a-f]* (order_lock_a)' \
    'taken at order_target_a_then_b' 'taken at order_target_b_then_a'; do
    grep -q "$want" "$dir/err" || fail "the report lacks '$want'"
done

# A read hold and a mutex.
PARK_CHECK_ORDER=warn under "$run" --check-order "$prog" rwlock >"$dir/out" 2>"$dir/err" || fail "rwlock mode failed"
grep -q 'lock-order inversion' "$dir/err" || fail "the rwlock inversion is not reported"
grep -q 'order_table' "$dir/err" || fail "the rwlock is not named: $(cat "$dir/err")"

# No false reports.
for mode in ordered reused; do
    PARK_CHECK_ORDER=warn under "$run" --check-order "$prog" "$mode" >"$dir/out" 2>"$dir/err" || fail "$mode failed"
    grep -q '^done$' "$dir/out" || fail "$mode did not finish"
    ! grep -q 'lock-order' "$dir/err" || fail "$mode reported: $(cat "$dir/err")"
done

# abort stops the program at the inversion; 0 checks nothing.
rc=0
PARK_CHECK_ORDER=abort under "$run" "$prog" inversion >"$dir/out" 2>"$dir/err" || rc=$?
[ "$rc" -ne 0 ] || fail "PARK_CHECK_ORDER=abort: the program ran to its end"
! grep -q '^done$' "$dir/out" || fail "PARK_CHECK_ORDER=abort: the program carried on"
grep -q 'lock-order inversion' "$dir/err" || fail "PARK_CHECK_ORDER=abort: no report"
PARK_CHECK_ORDER=0 under "$run" "$prog" inversion >"$dir/out" 2>"$dir/err" || fail "PARK_CHECK_ORDER=0 failed"
! grep -q 'lock-order' "$dir/err" || fail "PARK_CHECK_ORDER=0 reported"
echo "park-run --check-order: ok"
