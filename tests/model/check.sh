#!/bin/sh
# tests/model/check.sh: verifies the Promela models of tests/model/ with Spin.
#
# Each case builds a verifier (spin -a, then cc) for one model and one set
# of switches, runs it, and compares what Spin found with what the case
# expects: "pass" (no error), "lost-wakeup" (an invalid end state: a thread
# blocked forever), "exclusion" (the critical-section assertion) or
# "permit" (a permit or a read hold lost or duplicated, or a task freed
# twice) or "stranded" (work left queued while every worker sleeps) or
# "once" (an exactly-once or ordering assertion: a run, an item or a
# continuation lost, doubled or seen before its outcome was published) or
# "invariant" (an invariant of the state word and the counts beside it) or
# "livelock" (np cases: a cycle, such as a wake that runs forever).
# The broken variants must fail, which shows the checks can fail at all.
#
# PARK_MODEL_DEFS (e.g. -DSC_UNLOCK) is added to every case's switches. With
# -DSLEEP_CHECK_ALL every waiter fences, so the two variants that only break
# the cover (mutex-cover-by-p, mutex-fast-unlock-s) pass and are reported.
# PARK_MODEL_ONLY (a shell pattern, e.g. 'cond*') runs only the cases whose
# names match. The cases run in parallel, PARK_MODEL_JOBS at a time (default:
# one per CPU; each verifier takes up to about 1 GiB), each case's lines
# printed when it is done.
# PARK_MODEL_KEEP=1 keeps the work folder (models, verifiers, trails) for
# replaying a counterexample with spin -t -p.
# PARK_MODEL_FULL=1 adds the larger bounds (3 threads x 3 iterations: about
# 85 million states, about 3 minutes and 3.8 GiB of memory); the default cases
# take about four minutes on 2 CPUs (the mutex's about two and a half, the
# semaphore's, rwlock's, lazy run's, task's, channel's and condition
# variable's about a minute and a half together, the read-mostly rwlock's
# bias about 15 seconds; its larger bounds, bias-2x2 and bias-2-iters, 22
# and 71 million states, about 30 s and 2 minutes with -O2, up to 3.3 GiB).
# Exit status: 0 if every case came out as expected, 1 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}

if ! command -v spin >/dev/null 2>&1; then
    echo "check.sh: spin not found; install it with: apt-get install -y spin" >&2
    exit 1
fi
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "check.sh: no C compiler ($cc) to build Spin's verifier" >&2
    exit 1
fi

# --one NAME MODEL EXPECT DEFS MODE HASH: one case, in the work folder of
# the run that started it (the cases run as parallel processes, below).
one=
if [ "${1:-}" = --one ] && [ -n "${PARK_MODEL_WORK:-}" ]; then
    one=1
    shift
    work=$PARK_MODEL_WORK
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/park-model.XXXXXX") || exit 1
    if [ -n "${PARK_MODEL_KEEP:-}" ]; then
        echo "check.sh: work folder $work"
    else
        trap 'rm -rf "$work"' EXIT
        trap 'exit 1' HUP INT PIPE TERM
    fi
fi

failures=0

# one_case NAME MODEL EXPECT "SPIN_DEFS" SAFETY_OR_NP HASH_BITS
one_case()
{
    name=$1 model=$2 expect=$3 defs="$4 ${PARK_MODEL_DEFS:-}" mode=$5
    hash=$6
    dir=$work/$name
    mkdir -p "$dir" && cp "$here/$model" "$dir/" || return 1
    cd "$dir" || return 1
    # shellcheck disable=SC2086 # the switches are separate words
    if ! spin -a $defs "$model" >spin.log 2>&1; then
        cat spin.log >&2
        echo "FAIL $name: spin -a $defs $model" >&2
        failures=$((failures + 1))
        cd "$work" && return 0
    fi
    if [ "$mode" = np ]; then
        cflags="-DNP -DCOLLAPSE" runflags="-l"
    else
        cflags="-DSAFETY -DCOLLAPSE" runflags=""
    fi
    # Verifiers are built without optimisation: -O2 takes 4 s to build one
    # here against 0.9 s, and of the default cases only the largest (13
    # million states, the mutex's) runs longer for it, 22 s against 16 s.
    # PARK_MODEL_OPT=-O2 for the larger bounds.
    opt=${PARK_MODEL_OPT:--O0}
    # shellcheck disable=SC2086
    if ! "$cc" $opt $cflags -o pan pan.c >cc.log 2>&1; then
        cat cc.log >&2
        echo "FAIL $name: cannot build the verifier" >&2
        failures=$((failures + 1))
        cd "$work" && return 0
    fi
    # -w24: a 16M-slot hash table, room for the default cases (up to 10
    # million states) without much probing; the larger bounds pass more.
    # -m: far deeper than any run of these bounded models.
    # shellcheck disable=SC2086
    ./pan -m1000000 -w"$hash" $runflags >pan.log 2>&1
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | tail -n 1)
    states=$(sed -n 's/^ *\([0-9][0-9.e+]*\) states, stored.*/\1/p' pan.log | tail -n 1)
    secs=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' pan.log | tail -n 1)
    found=none
    if grep -q 'max search depth too small' pan.log; then
        found=incomplete
    elif [ -z "$errors" ]; then
        found=crashed
    elif [ "$errors" -gt 0 ]; then
        if grep -q '^pan:[0-9]*: invalid end state' pan.log; then
            found=lost-wakeup
        elif grep -q '^pan:[0-9]*: assertion violated' pan.log; then
            found=assertion
        elif grep -q '^pan:[0-9]*: non-progress cycle' pan.log; then
            found=livelock
        else
            found=other
        fi
    fi
    case $expect:$found in
    pass:none | lost-wakeup:lost-wakeup | exclusion:assertion | permit:assertion | \
        stranded:assertion | once:assertion | invariant:assertion | livelock:livelock)
        printf 'ok   %-28s %-12s states %-10s %ss  (%s)\n' "$name" "$expect" \
            "${states:-?}" "${secs:-?}" "spin -D: $defs" ;;
    *)
        failures=$((failures + 1))
        printf 'FAIL %-28s expected %s, Spin found %s (errors: %s)  (%s)\n' "$name" \
            "$expect" "$found" "${errors:-?}" "spin -D: $defs" >&2
        grep -E '^pan:[0-9]*:' pan.log >&2
        if [ -f "$model.trail" ]; then
            echo "  counterexample, steps of the threads and of the store buffers (step," \
                "thread or mem, model line," \
                "statement; all steps: PARK_MODEL_KEEP=1, then spin -t -p $defs $model" \
                "in $dir):" >&2
            # shellcheck disable=SC2086
            spin -t -p $defs "$model" 2>&1 | awk '
                /proc +[0-9]+ \((Thread|Memory):/ && /\[/ {
                    step = $1; sub(":", "", step)
                    who = $4 ~ /Memory/ ? "mem" : "T" ($3 - 2)
                    line = $5; sub(".*:", "", line)
                    stmt = $0; sub("^[^[]*", "", stmt)
                    if (stmt ~ /^\[(else|\(1\)|k = .*|s = 0|r = 0|w = 255|\.\(goto\)|break|goto .*|DO|IF|sub-sequence|front = 0|expired = 0|got = 0|covered = 0|grant\[me\] = 0)\]$/)
                        next
                    printf "  %5s  %-3s  %4s  %s\n", step, who, line, stmt
                }' >&2
        fi ;;
    esac
    cd "$work" || return 1
}

if [ -n "$one" ]; then
    one_case "$@" >"$work/out.$1" 2>&1 # not in a subshell: failures counts
    cat "$work/out.$1"
    [ "$failures" -eq 0 ] || : >"$work/failed.$1"
    exit 0
fi

# run_case NAME MODEL EXPECT "SPIN_DEFS" [safety|np] [HASH_BITS]: lists the
# case (PARK_MODEL_ONLY, a shell pattern, keeps only the names it matches);
# the listed cases run at the end, PARK_MODEL_JOBS at a time (default: one
# per CPU), each printing its lines when it is done.
run_case()
{
    case $1 in
    ${PARK_MODEL_ONLY:-*}) ;;
    *) return 0 ;;
    esac
    printf '%s\n' "$1" "$2" "$3" "$4" "${5:-safety}" "${6:-24}" >>"$work/cases"
}

# park_mutex (lib/mutex.c): the model of the code as it is must pass; the
# broken variants must fail the way they are broken.
run_case mutex                  mutex.pml pass        ""
run_case mutex-timed            mutex.pml pass        "-DTIMED"
run_case mutex-cas-unlock       mutex.pml pass        "-DCAS_UNLOCK -DTIMED"
run_case mutex-one-credit       mutex.pml pass        "-DONE_CREDIT -DTIMED"
run_case mutex-4x1              mutex.pml pass        "-DNPROC=4 -DITERS=1"
run_case mutex-termination      mutex.pml pass        "-DITERS=1" np
run_case mutex-termination-timed mutex.pml pass       "-DITERS=1 -DTIMED" np
run_case mutex-no-membarrier    mutex.pml lost-wakeup "-DNO_MEMBARRIER"
run_case mutex-no-hint          mutex.pml lost-wakeup "-DNO_HINT"
run_case mutex-handoff-no-l     mutex.pml exclusion   "-DHANDOFF_NO_L"
# What makes a covered waiter's skipped membarrier safe is that its holder
# carries S and S keeps that holder off the store unlock: trusting a P that
# was already set (the rule before S) fails, and so does a store unlock
# that ignores S (L|S once the credits have run out: seen with one credit).
run_case mutex-cover-by-p       mutex.pml lost-wakeup "-DCOVER_BY_P"
run_case mutex-fast-unlock-s    mutex.pml lost-wakeup "-DFAST_UNLOCK_S -DONE_CREDIT"
# Not broken, and checked as such: without S on take-from-P, only a handed-
# off holder covers its waiters, so more waiters fence. Such a holder that
# took P -> L|P still unlocks slowly while P is set (P stays set while a
# waiter is queued); once P is cleared its word is L and the next waiter is
# not covered. S on take-from-P saves membarriers; it is not needed for
# correctness.
run_case mutex-no-slow-bit      mutex.pml pass        "-DNO_SLOW_BIT"
# One woken waiter in flight (W): a W that outlives its waiter makes every
# unlock wake nobody while the others sleep, whether the woken waiter
# queues again keeping it, or gives up keeping it, or gives up on a free
# mutex without passing it on. Losing W is not broken (more wake-ups, and
# checked as such): only a W nobody owns is.
run_case mutex-no-remark        mutex.pml lost-wakeup "-DNO_REMARK -DLOOSE_W"
run_case mutex-timeout-keeps-w  mutex.pml lost-wakeup "-DTIMED -DTIMEOUT_KEEPS_W -DLOOSE_W"
run_case mutex-pass-no-check    mutex.pml lost-wakeup "-DTIMED -DPASS_NO_CHECK"
# A lock-free unlock that finds P clear must read the hint as the store
# unlock does: a P erased by an earlier store unlock is otherwise lost for
# the waiters behind the one its hinted wake-up woke.
run_case mutex-cas-unlock-no-hint mutex.pml lost-wakeup "-DCAS_UNLOCK_NO_HINT"
run_case mutex-no-woken-mark    mutex.pml pass        "-DTIMED -DNO_WOKEN_MARK -DLOOSE_W"
run_case mutex-barger-clears-w  mutex.pml pass        "-DTIMED -DBARGER_CLEARS_W -DLOOSE_W"
# In a child of fork(), a W left by a thread the fork left behind is owned
# by nobody; there W holds back no wake-up (lib/mutex.c and lib/wait/fork.h, park__woken_mark), so
# a W nobody owns is harmless, and several woken waiters may be in flight.
# An unlock that finds a late woken waiter wakes one more beside it: W then
# no longer names one waiter (so LOOSE_W), but nothing is lost.
run_case mutex-late-woken       mutex.pml pass        "-DTIMED -DLATE_WOKEN -DLOOSE_W"
run_case mutex-late-woken-4x1   mutex.pml pass        "-DLATE_WOKEN -DLOOSE_W -DNPROC=4 -DITERS=1"
run_case mutex-forked           mutex.pml pass        "-DTIMED -DFORKED -DLOOSE_W"
run_case mutex-forked-no-repair mutex.pml lost-wakeup "-DTIMED -DFORKED_NO_REPAIR -DLOOSE_W"

# Asynchronous acquisitions (lib/async.c, lib/task/task.c): a grant racing a
# cancel, a deadline and the drops of the task's references conserves the
# permit and frees the task once; the two broken variants are the races the
# stress tests found (a cancel that lost to the grant not counting as having
# seen it, and "am I the last holder?" checked apart from the decrement).
run_case acquire                acquire.pml pass      ""
run_case acquire-timer          acquire.pml pass      "-DTIMER"
run_case acquire-two-holders    acquire.pml pass      "-DTWO_HOLDERS"
run_case acquire-timer-holders  acquire.pml pass      "-DTIMER -DTWO_HOLDERS"
run_case acquire-no-observe     acquire.pml permit    "-DNO_OBSERVE_ON_EALREADY"
run_case acquire-racy-release   acquire.pml permit    "-DRACY_RELEASE -DTWO_HOLDERS"

# The pool's idling (lib/pool/pool.c): no submission is stranded while
# every worker sleeps; without the re-check after counting itself a sleeper,
# or with a searcher that keeps its count when it gives up, work is.
run_case pool                   pool.pml    pass      ""
run_case pool-3-producers       pool.pml    pass      "-DPRODUCERS=3 -DITEMS=1"
run_case pool-no-recheck        pool.pml    stranded  "-DNO_RECHECK"
run_case pool-no-baton          pool.pml    stranded  "-DNO_BATON"
# ... and with a worker that waits for a latch (a joiner), kicked by a
# submission that finds every other worker up; without the kick, or with a
# joiner that does not re-read its kick under the bucket lock, work is.
run_case pool-joiner            pool.pml    pass      "-DJOINER -DWORKERS=1"
run_case pool-only-joiner       pool.pml    pass      "-DJOINER -DWORKERS=0 -DPRODUCERS=3"
run_case pool-no-kick           pool.pml    stranded  "-DJOINER -DWORKERS=0 -DNO_KICK"
run_case pool-no-kick-recheck   pool.pml    stranded  "-DJOINER -DWORKERS=0 -DNO_KICK_RECHECK"

# The default semaphore (lib/sem.c): barging with one woken waiter in flight
# (K) and hand-off to a waiter owed it conserve permits and lose no
# wake-up; a retire that does not pass K on, a woken waiter that re-queues
# keeping K, or a wake that does not run again when the word changed under
# it, leaves sleepers beside a free permit.
run_case sem                    sem.pml     pass        ""
run_case sem-timeouts           sem.pml     pass        "-DTIMEOUTS"
run_case sem-2-permits          sem.pml     pass        "-DPERMITS=2 -DTHREADS=4 -DROUNDS=1 -DTIMEOUTS"
run_case sem-no-pass            sem.pml     lost-wakeup "-DTIMEOUTS -DNO_PASS"
run_case sem-keep-k             sem.pml     lost-wakeup "-DKEEP_K"
run_case sem-no-again           sem.pml     lost-wakeup "-DTIMEOUTS -DNO_AGAIN"
# In a child of fork(), as for the mutex: K holds back no release or wake
# (lib/sem.c, park__woken_mark), so a K owned by nobody is harmless.
run_case sem-forked             sem.pml     pass        "-DTIMEOUTS -DFORKED"
run_case sem-forked-no-repair   sem.pml     lost-wakeup "-DTIMEOUTS -DFORKED_NO_REPAIR"
run_case sem-queued-timeouts    sem.pml     pass        "-DTIMEOUTS -DQUEUED_TIMEOUTS"
# Releases beyond the maximum (-DOVERFLOW): a failed release placed none of
# its permits, and the count never exceeds the maximum. Without R a locked
# wake can hand one permit and refuse the rest; that takes five threads (a
# holder's release woke a waiter a barger then beat, another waiter is
# owed, two hold), where the correct model has about 93 million states
# (PARK_MODEL_FULL: sem-overflow-5, about 4 minutes).
run_case sem-overflow           sem.pml     pass        "-DOVERFLOW -DPERMITS=2 -DTHREADS=4 -DROUNDS=1 -DTIMEOUTS -DQUEUED_TIMEOUTS"
run_case sem-overflow-no-reserve sem.pml    permit      "-DOVERFLOW -DPERMITS=2 -DTHREADS=5 -DROUNDS=1 -DTIMEOUTS -DQUEUED_TIMEOUTS -DNO_RESERVE"
# The FIFO semaphore (park_sem_init_fifo): every permit handed to the
# queue's head under the bucket lock, W => count == 0, timed-out waiters
# leave no permit behind; a release that adds to the count while W is set,
# or a validate that does not re-read the count, leaves sleepers beside a
# free permit.
run_case sem-fifo               sem.pml     pass        "-DFIFO -DQUEUED_TIMEOUTS"
run_case sem-fifo-2-permits     sem.pml     pass        "-DFIFO -DQUEUED_TIMEOUTS -DPERMITS=2 -DTHREADS=4 -DROUNDS=1"
run_case sem-fifo-termination   sem.pml     pass        "-DFIFO -DQUEUED_TIMEOUTS" np
run_case sem-fifo-barge         sem.pml     lost-wakeup "-DFIFO -DFIFO_BARGE"
run_case sem-fifo-no-recheck    sem.pml     lost-wakeup "-DFIFO -DFIFO_NO_RECHECK"
# Several permits (park_sem_acquire_n): thread 0 asks for two. It is handed
# them, or passed while young, or, once owed (FIFO: at the head), gathers
# the permits released until it has both, holding back those behind it; a
# timed-out one gives back what it gathered with a release. With KEEP_ONE a
# consumer keeps one permit, so thread 0 must time out and the waiters
# behind it (which cannot) rely on its give-back. Broken: a give-back that
# drops the permits, one that puts them in the count without a wake (Go
# issue 37852), a young head that holds back the others and leaves without
# a wake, a wake that runs again though K was clear when it looked.
run_case sem-many               sem.pml     pass        "-DMANY -DPERMITS=2 -DTIMEOUTS -DQUEUED_TIMEOUTS"
run_case sem-many-3-permits     sem.pml     pass        "-DMANY -DPERMITS=3 -DTIMEOUTS -DQUEUED_TIMEOUTS"
run_case sem-many-keep-one      sem.pml     pass        "-DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS -DKEEP_ONE"
run_case sem-many-4-keep-one    sem.pml     pass        "-DMANY -DPERMITS=2 -DTHREADS=4 -DROUNDS=1 -DTIMEOUTS -DQUEUED_TIMEOUTS -DKEEP_ONE"
run_case sem-many-termination   sem.pml     pass        "-DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS -DKEEP_ONE" np
run_case sem-many-no-give-back  sem.pml     permit      "-DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS -DKEEP_ONE -DNO_GIVE_BACK"
run_case sem-many-give-back-no-wake sem.pml lost-wakeup "-DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS -DKEEP_ONE -DGIVE_BACK_NO_WAKE"
run_case sem-many-head-holds-back sem.pml   lost-wakeup "-DMANY -DPERMITS=2 -DTHREADS=4 -DROUNDS=1 -DQUEUED_TIMEOUTS -DKEEP_ONE -DHEAD_HOLDS_BACK"
run_case sem-many-again-always  sem.pml     livelock    "-DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS -DKEEP_ONE -DAGAIN_ALWAYS" np
run_case sem-fifo-many          sem.pml     pass        "-DFIFO -DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS"
run_case sem-fifo-many-keep-one sem.pml     pass        "-DFIFO -DMANY -DPERMITS=2 -DTHREADS=4 -DROUNDS=1 -DQUEUED_TIMEOUTS -DKEEP_ONE"
run_case sem-fifo-many-no-give-back sem.pml permit      "-DFIFO -DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS -DKEEP_ONE -DNO_GIVE_BACK"
run_case sem-fifo-many-give-back-no-wake sem.pml invariant "-DFIFO -DMANY -DPERMITS=2 -DQUEUED_TIMEOUTS -DKEEP_ONE -DGIVE_BACK_NO_WAKE"

# How a granted waiter learns its grant (lib/wait/queue.c): a waker
# exchanges each waiter's word and wakes a batch's shared word only if one
# of them had marked itself asleep; no waiter sleeps forever, none ends
# ungranted, also with spurious returns and another key's wakes of the
# shared word. Broken: the waker's read and store of the word in two
# steps, the waiter reading the shared word after marking itself asleep.
run_case wake                   wake.pml    pass        "-DOTHER -DSPURIOUS"
run_case wake-3                 wake.pml    pass        "-DNW=3 -DOTHER -DSPURIOUS"
run_case wake-load-store        wake.pml    lost-wakeup "-DLOAD_STORE"
run_case wake-seq-after-mark    wake.pml    lost-wakeup "-DSEQ_AFTER_MARK"

# park_lazy and park_once (lib/lazy.c): runs never overlap, at most one
# succeeds, a failed run rolls back and its queued callers get its error,
# a re-entrant call gets EDEADLK, and no caller sleeps forever. Broken: a
# validate that queues behind a run that has ended, an end of run that
# never looks for queued callers, a re-entrant call that waits for itself.
run_case lazy                   lazy.pml    pass        "-DTIMED -DREENTRY"
run_case lazy-4-fails           lazy.pml    pass        "-DNPROC=4 -DFAILS=2 -DTIMED -DREENTRY"
run_case lazy-termination       lazy.pml    pass        "-DTIMED -DREENTRY" np
run_case lazy-no-recheck        lazy.pml    lost-wakeup "-DNO_RECHECK"
run_case lazy-blind-end         lazy.pml    lost-wakeup "-DBLIND_END"
run_case lazy-no-reentry        lazy.pml    lost-wakeup "-DREENTRY -DNO_REENTRY"

# A task's completion (lib/task/task.c): of a complete and a cancel, one
# wins and the other returns EALREADY once the outcome is visible; each
# continuation runs once, after done, whether it was listed or found the
# list closed; the task is freed once, after its last use. Broken: the list
# closed before done is set, the list taken and closed in two steps, a
# loser that does not wait for done, a latch validate that does not look
# for SET again.
run_case task                   task.pml    pass        ""
run_case task-termination       task.pml    pass        "" np
run_case task-close-first       task.pml    once        "-DCLOSE_FIRST"
run_case task-split-close       task.pml    once        "-DSPLIT_CLOSE"
run_case task-loser-no-wait     task.pml    once        "-DLOSER_NO_WAIT"
run_case task-latch-no-recheck  task.pml    lost-wakeup "-DLATCH_NO_RECHECK"

# The channel (lib/chan.c): a one-cell ring going full against sleeping
# senders and empty against sleeping receivers; every item received once,
# nobody left asleep beside room or an item (also with 3 senders and 2
# cells); a kick grants one waiter, and a thread it grants follows up in
# its stead. Broken: a validate that does not look at the ring again after
# setting its flag (either side), a send that reads RWAIT before its
# reservation instead of after, a granted thread that does not kick the
# other side for the kicker.
run_case chan                   chan.pml    pass        ""
run_case chan-2-receivers       chan.pml    pass        "-DSENDERS=1 -DRECEIVERS=2 -DPER=2"
run_case chan-2x2               chan.pml    pass        "-DSENDERS=2 -DRECEIVERS=2"
run_case chan-3-senders-cap2    chan.pml    pass        "-DSENDERS=3 -DCAP=2"
run_case chan-termination       chan.pml    pass        "-DSENDERS=1 -DRECEIVERS=2 -DPER=2" np
run_case chan-recv-no-recheck   chan.pml    lost-wakeup "-DRECV_NO_RECHECK -DSENDERS=1 -DRECEIVERS=2 -DPER=2"
run_case chan-send-no-recheck   chan.pml    lost-wakeup "-DSEND_NO_RECHECK"
run_case chan-kick-early        chan.pml    lost-wakeup "-DKICK_EARLY"
run_case chan-no-follow-up      chan.pml    lost-wakeup "-DNO_FOLLOW_UP -DSENDERS=1 -DRECEIVERS=2 -DPER=2"
# ... and closed meanwhile: every item sent is received once or left in
# the ring, and every sleeper is woken with an item or EPIPE; a receive
# validate that does not look for CLOSED sleeps through the close.
run_case chan-close             chan.pml    pass        "-DCLOSE"
run_case chan-close-2-receivers chan.pml    pass        "-DCLOSE -DSENDERS=1 -DRECEIVERS=2 -DPER=2"
run_case chan-recv-no-closed    chan.pml    lost-wakeup "-DCLOSE -DRECV_NO_CLOSED"

# The condition variable (lib/cond.c) with its mutex, as the drop-in uses it:
# a broadcast's waiters chained through the mutex's releases (also when
# another thread unlocks it for them), signals, a waiter that times out,
# and one cancelled as a signal or broadcast takes it; nobody is left
# asleep. Broken: a release that does not wake the waiter left on the
# mutex, a woken waiter that leaves none there, a leaving waiter that
# clears `waiters` while others remain, a cancelled waiter that consumes
# its signal.
run_case cond                   cond.pml    pass        ""
run_case cond-timed             cond.pml    pass        "-DTIMED -DNW=4"
run_case cond-cancel            cond.pml    pass        "-DCANCEL"
run_case cond-other-unlocks     cond.pml    pass        "-DOTHER_UNLOCKS"
run_case cond-signal-timed      cond.pml    pass        "-DSIGNAL -DTIMED"
run_case cond-signal-cancel     cond.pml    pass        "-DSIGNAL -DCANCEL"
run_case cond-no-pass           cond.pml    lost-wakeup "-DNO_PASS"
run_case cond-no-chain          cond.pml    lost-wakeup "-DCANCEL -DNO_CHAIN"
run_case cond-clear-always      cond.pml    lost-wakeup "-DSIGNAL -DTIMED -DCLEAR_ALWAYS"
run_case cond-no-resignal       cond.pml    lost-wakeup "-DSIGNAL -DCANCEL -DNO_RESIGNAL"
# park_cond_wait: a taken waiter is moved onto the mutex, whose release
# hands it over; broken: a waiter that does not know it was handed the
# mutex, a release that frees a mutex waiters are queued on, a chain that
# does not move the next waiter.
run_case cond-morph             cond.pml    pass        "-DMORPH"
run_case cond-morph-timed       cond.pml    pass        "-DMORPH -DTIMED -DNW=4"
run_case cond-morph-other-unlocks cond.pml  pass        "-DMORPH -DOTHER_UNLOCKS"
run_case cond-morph-signal-timed cond.pml   pass        "-DMORPH -DSIGNAL -DTIMED"
run_case cond-morph-no-chain    cond.pml    lost-wakeup "-DMORPH -DNO_CHAIN"
run_case cond-morph-no-own      cond.pml    lost-wakeup "-DMORPH -DSIGNAL -DNO_OWN"
run_case cond-morph-no-handoff  cond.pml    lost-wakeup "-DMORPH -DNO_HANDOFF"

# The rwlock (lib/rwlock.c): writer preference (WW, D and the last reader's
# hand-over), the reader batch, downgrade, a timed-out writer that admits
# the readers behind it, a timed-out reader, and writers handed the lock
# or woken to retry;
# readers and writers exclude each other and nobody is left asleep.
# Broken: WW without D behind readers, a timed-out writer that admits
# nobody, a hand-off without W, a finish that does not re-read the word.
run_case rwlock                 rwlock.pml  pass        "-DITERS=2 -DTIMED"
run_case rwlock-downgrade       rwlock.pml  pass        "-DITERS=2 -DTIMED -DDOWNGRADE"
run_case rwlock-2-writers       rwlock.pml  pass        "-DNWRITERS=2 -DNREADERS=1 -DITERS=2 -DTIMED"
run_case rwlock-2x2             rwlock.pml  pass        "-DNWRITERS=2 -DNREADERS=2 -DTIMED -DDOWNGRADE"
run_case rwlock-timed-reader    rwlock.pml  pass        "-DITERS=2 -DTIMED -DTIMED_READER -DDOWNGRADE"
run_case rwlock-termination     rwlock.pml  pass        "-DNWRITERS=2 -DNREADERS=1 -DTIMED" np
run_case rwlock-no-drain        rwlock.pml  invariant   "-DNO_DRAIN"
run_case rwlock-no-drain-loose  rwlock.pml  lost-wakeup "-DNO_DRAIN -DLOOSE_D"
run_case rwlock-no-admit        rwlock.pml  lost-wakeup "-DNO_ADMIT -DTIMED"
run_case rwlock-handoff-no-w    rwlock.pml  exclusion   "-DHANDOFF_NO_W"
run_case rwlock-plan-stale      rwlock.pml  permit      "-DPLAN_STALE -DTIMED"
# The read-mostly rwlock's bias (lib/rwlock_mostly.c): readers that publish
# their holds in the readers' table race writers that revoke the bias and
# move the table's holds into the word; readers re-bias; holds released by
# another thread, groups that collide, try_write_lock. Exclusion, the bias
# hold never taken by a release, no hold lost, no legitimate release called
# misuse, no writer asleep behind a bias hold. Broken: a reader that does
# not check the bias again after publishing, a revocation that moves
# nothing, a release that does not search the table, a validate that queues
# on a biased lock, a revoker that clears a slot before counting its hold in
# the word, a misuse verdict on a word read before the flags, or re-read
# alone, a plain release (the word's alone) while REVOKING.
run_case bias                   bias.pml    pass        "" safety 22
run_case bias-shared-slot       bias.pml    pass        "-DXREL -DSHARED" safety 22
run_case bias-3-iters           bias.pml    pass        "-DNREADERS=1 -DITERS=3 -DXREL -DSHARED" safety 22
run_case bias-2-writers         bias.pml    pass        "-DNWRITERS=2 -DNREADERS=1 -DXREL -DSHARED" safety 20
run_case bias-trylock           bias.pml    pass        "-DTRY_WRITER -DXREL" safety 20
run_case bias-trylock-2-writers bias.pml    pass        "-DTRY_WRITER -DNWRITERS=2 -DNREADERS=1 -DXREL -DSHARED" safety 20
run_case bias-no-recheck        bias.pml    exclusion   "-DNO_RECHECK" safety 20
run_case bias-no-move           bias.pml    exclusion   "-DNO_MOVE" safety 20
run_case bias-unlock-no-search  bias.pml    permit      "-DXREL -DUNLOCK_NO_SEARCH" safety 20
run_case bias-validate-ignores-bias bias.pml lost-wakeup "-DVALIDATE_IGNORES_BIAS" safety 20
run_case bias-move-then-add     bias.pml    permit      "-DMOVE_THEN_ADD" safety 20
run_case bias-stale-word        bias.pml    permit      "-DSTALE_WORD" safety 20
run_case bias-reread-word       bias.pml    permit      "-DREREAD_WORD" safety 20
run_case bias-fast-while-revoking bias.pml  permit      "-DFAST_WHILE_REVOKING" safety 20

# The event (lib/event.c), auto and manual reset: a set racing waiters that
# queue, time out and are granted as their deadline passes, and (manual)
# resets right behind the sets; nobody sleeps beside a set event or after
# a set that found it queued, and (auto) every set is consumed once or
# stays. Broken: a validate that ignores S, an inline set that ignores W,
# a manual set that grants one waiter, an auto set that grants all, a
# timed-out waiter that drops its grant, a leaving waiter that clears W
# while others remain.
run_case event                  event.pml   pass        ""
run_case event-timed            event.pml   pass        "-DTIMED -DNW=3 -DNTIMED=2"
run_case event-2-setters        event.pml   pass        "-DTIMED -DSETTERS=2 -DNSETS=1 -DNW=3"
run_case event-manual           event.pml   pass        "-DMANUAL -DRESET -DTIMED"
run_case event-manual-2-setters event.pml   pass        "-DMANUAL -DRESET -DTIMED -DNW=3 -DSETTERS=2"
run_case event-no-recheck       event.pml   lost-wakeup "-DNO_RECHECK"
run_case event-blind-set        event.pml   lost-wakeup "-DBLIND_SET"
run_case event-manual-one       event.pml   lost-wakeup "-DMANUAL -DMANUAL_ONE -DRESET"
run_case event-auto-all         event.pml   permit      "-DAUTO_ALL"
run_case event-timeout-loses    event.pml   permit      "-DTIMED -DTIMEOUT_LOSES"
run_case event-clear-w-always   event.pml   lost-wakeup "-DMANUAL -DTIMED -DCLEAR_W_ALWAYS -DNW=3"

# The barrier (lib/barrier.c): phases of 3 or 4 participants with a
# completion, arrive_and_drop, an asynchronous waiter cancelled; phases
# never mix, one serial arrival per phase, nobody left asleep. Broken: a
# validate that queues after its phase ended, an advance that ignores W,
# waiters released before the completion, a next phase that ignores
# drops, a cancel that clears W while others remain. The latch
# (lib/latch.c, -DLATCH): count_downs racing waiters, one timed; broken: a
# validate that ignores the count, a lock-free count_down that ignores W.
run_case barrier                barrier.pml pass        "-DPHASES=3"
run_case barrier-drop           barrier.pml pass        "-DDROP -DPHASES=3"
run_case barrier-cancel         barrier.pml pass        "-DCANCEL"
run_case barrier-4-drop-cancel  barrier.pml pass        "-DNP=4 -DCANCEL -DDROP -DPHASES=3"
run_case barrier-no-phase-check barrier.pml lost-wakeup "-DNO_PHASE_CHECK"
run_case barrier-blind-advance  barrier.pml lost-wakeup "-DBLIND_ADVANCE"
run_case barrier-release-first  barrier.pml once        "-DRELEASE_FIRST"
run_case barrier-reset-to-count barrier.pml lost-wakeup "-DDROP -DPHASES=3 -DRESET_TO_COUNT"
run_case barrier-clear-w-always barrier.pml lost-wakeup "-DCANCEL -DCLEAR_W_ALWAYS"
run_case latch                  barrier.pml pass        "-DLATCH -DTIMED -DNW=3 -DNC=3"
run_case latch-no-recheck       barrier.pml lost-wakeup "-DLATCH -DLATCH_NO_RECHECK"
run_case latch-blind-down       barrier.pml lost-wakeup "-DLATCH -DLATCH_BLIND_DOWN"

if [ -n "${PARK_MODEL_FULL:-}" ]; then
    run_case pool-3-workers     pool.pml    pass      "-DWORKERS=3" safety 26
    run_case pool-joiner-2      pool.pml    pass      "-DJOINER" safety 26
    run_case mutex-3x3          mutex.pml pass        "-DITERS=3" safety 26
    run_case sem-overflow-5     sem.pml     pass      "-DOVERFLOW -DPERMITS=2 -DTHREADS=5 -DROUNDS=1 -DTIMEOUTS -DQUEUED_TIMEOUTS" safety 26
    run_case bias-2x2           bias.pml    pass      "-DNWRITERS=2" safety 26
    run_case bias-2-iters       bias.pml    pass      "-DITERS=2" safety 26
fi

jobs=${PARK_MODEL_JOBS:-$(nproc 2>/dev/null || echo 1)}
if [ -s "$work/cases" ]; then
    PARK_MODEL_WORK=$work xargs -a "$work/cases" -d '\n' -n 6 -P "$jobs" \
        sh "$here/check.sh" --one || failures=1
fi
failures=$(find "$work" -maxdepth 1 -name 'failed.*' | wc -l)
if [ "$failures" -ne 0 ]; then
    echo "check.sh: $failures case(s) did not come out as expected:" \
        "$(cd "$work" && ls failed.* | sed 's/^failed\.//' | tr '\n' ' ')" >&2
    exit 1
fi
echo "check.sh: all model cases came out as expected"
