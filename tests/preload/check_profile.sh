#!/bin/sh
# tests/preload/check_profile.sh PARK_RUN PROGRAM
#
# park-run --profile: an unmodified pthread program's contended call site
# heads the table written to $PARK_PROFILE_OUT at exit (named as the
# caller of pthread_mutex_lock, not the drop-in's own frame), the site
# nobody contends is not listed, and the folded stacks lie beside it.
# Without --profile nothing is written. PARK_TEST_LD_PRELOAD (the ASan
# runtime, in the asan preset) is put in LD_PRELOAD for park-run and the
# program only, not for this script's own tools.
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

PARK_PROFILE_OUT=$dir/profile under "$run" --profile "$prog" >"$dir/stdout" ||
    fail "the program failed under park-run --profile"
grep -q '^done$' "$dir/stdout" || fail "the program did not finish"
[ -s "$dir/profile" ] || fail "no report in PARK_PROFILE_OUT"
cat "$dir/profile"
grep -q '^park contention profile (pid [0-9]*): [1-9][0-9]* contended waits' "$dir/profile" ||
    fail "no contended waits recorded"
first=$(awk '$1 == "1" { print; exit }' "$dir/profile")
case $first in
*' mutex '*contended_pthread_site+0x*) ;;
*) fail "rank 1 is not the contended site: $first" ;;
esac
! grep -q 'uncontended_pthread_site' "$dir/profile" || fail "the uncontended site is listed"
! grep -q ' pthread_mutex_lock+' "$dir/profile" || fail "the drop-in's own frame is listed"
grep -q ';contended_pthread_site;park:mutex [0-9]*$' "$dir/profile.folded" ||
    fail "folded stacks: $(cat "$dir/profile.folded")"

# Not asked for: no report.
PARK_PROFILE_OUT=$dir/none under "$run" "$prog" >/dev/null || fail "the program failed under park-run"
[ ! -e "$dir/none" ] || fail "a report without --profile"
echo "ok: park-run --profile"
