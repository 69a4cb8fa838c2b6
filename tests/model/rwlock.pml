/* tests/model/rwlock.pml: park_rwlock (lib/rwlock.c, include/park/rwlock.h)
 * and the part of lib/wait it uses, for Spin. Run by check.sh.
 *
 * Modelled: NWRITERS writer threads and NREADERS reader threads, each
 * doing ITERS times: lock, critical section, unlock. With -DDOWNGRADE the
 * writers downgrade their write hold to a read hold, then read-unlock.
 * With -DTIMED the first writer uses park_rwlock_write_lock_until with a
 * deadline that may pass at any check or while it is queued; with
 * -DTIMED_READER the last reader uses park_rwlock_read_lock_until so (a
 * queued reader that gives up: read_removed clears RQ if it was the last).
 *   - The state word, exactly: the read holds (n, 0 to 7 here), D (DRAIN),
 *     RQ, WW and W; beside it, under the bucket lock, wqueued (writers
 *     queued or woken to retry and not back: in flight), rqueued and
 *     wstreak (the policy's K is PARK_RWLOCK_WRITER_STREAK = 2).
 *   - Fast paths, one atomic step each: read_lock's CAS loop n|r -> n+1|r
 *     on a word without W, WW and D; read_unlock's fetch_sub (the reader
 *     that takes 1|D to 0|D then runs the slow release LAST_READ);
 *     write_lock 0 -> W, write_unlock W -> 0, downgrade W -> 1 (each from
 *     exactly that word, else the slow path).
 *   - The slow paths: read validate (take on a word without W, WW and D,
 *     else RQ, rqueued++ and queue at the back) and write validate (an
 *     in-flight writer uncounts itself; a free word: x -> W|x' keeping WW
 *     if writers are still counted; else WW, with D if readers hold it
 *     (drain_bit), wqueued++ and queue: at the front for a writer back
 *     from a retry). One try (read_wait, write_spin) stands for a spin.
 *   - The release (write_unlock, downgrade, last reader, a timed-out
 *     writer's admit) is park__unpark: under the bucket lock, select
 *     (make_plan from the word as it is then, then grant the oldest
 *     writer, or every queued reader, or nobody); then, still locked,
 *     finish: the counts, and the CAS that drops the releaser's hold,
 *     adds the readers granted, sets W for a writer handed the lock and
 *     RQ, WW and D from the counts. Between select and finish lock-free
 *     steps of others run (readers leave; on a word without W, WW and D,
 *     readers enter). A queue found empty makes its plan in finish. A
 *     writer granted the lock is handed it (W) or woken to retry (it stays
 *     counted): nondeterministically, since the choice depends on whether
 *     it is still spinning (park__waiter_asleep) and on the clock
 *     (park__wait_owed). Grants reach the waiters after the unlock.
 *   - A timed-out writer takes itself out under the bucket lock (unless a
 *     release dequeued it first: the grant stands), write_removed clears
 *     WW and D if it was the last counted writer and decides whether to
 *     admit the readers queued behind it, then releases with ADMIT.
 * Abstracted: the futex, spurious wake-ups (absorbed by lib/wait), the
 * reader batch word (the batch is granted in one select here), async
 * waiters, PARK_DEBUG's re-entry tracking, the reader-count guard.
 *
 * Checked:
 *   - mutual exclusion: a writer in its section sees no reader and no other
 *     writer, a reader sees no writer;
 *   - whenever the bucket lock is released: WW <=> wqueued > 0, RQ <=>
 *     rqueued > 0, D and W never together, and with readers in and no W,
 *     D <=> WW;
 *   - no lost wake-up: every thread finishes (invalid end state if not);
 *   - at the end the word is 0, no count is left, the queue is empty
 *     (park_rwlock_destroy would return 0).
 *
 * Broken variants (must fail):
 *   NO_DRAIN      write validate sets WW without D behind readers: the
 *                 invariant D <=> WW fails; with LOOSE_D (that check
 *                 dropped, to look for its consequence instead) the last
 *                 reader out does not hand over (lost wake-up)
 *   NO_ADMIT      a timed-out writer that was the last one counted does
 *                 not release with ADMIT: the readers queued behind it
 *                 sleep although only readers hold the lock (lost wake-up;
 *                 with TIMED)
 *   HANDOFF_NO_W  a writer handed the lock is granted without W in the
 *                 word: a barging writer or reader joins it (exclusion)
 *   PLAN_STALE    finish computes the word from the one select saw instead
 *                 of re-reading it in its CAS loop: a fast reader that left
 *                 in between (during a timed-out writer's admit, on a word
 *                 without W, WW and D) is counted again, and the lock is
 *                 never free again (the final check; with TIMED) */

#ifndef NWRITERS
#define NWRITERS 1
#endif
#ifndef NREADERS
#define NREADERS 2
#endif
#ifndef ITERS
#define ITERS 1
#endif
#define NPROC (NWRITERS + NREADERS)
#define STREAK 2 /* PARK_RWLOCK_WRITER_STREAK */
#ifdef TIMED
#define TIMED_PID 0
#else
#define TIMED_PID NPROC
#endif
#ifdef TIMED_READER
#define TREAD_PID (NPROC - 1)
#else
#define TREAD_PID NPROC
#endif

#define RMASK 7 /* the read holds */
#define D 8     /* PARK__RW_DRAIN */
#define RQ 16   /* PARK__RW_READERS_QUEUED */
#define WW 32   /* PARK__RW_WRITER_WAITING */
#define WB 64   /* PARK__RW_WRITER */

/* waiters' want and grants */
#define WANT_READ 1
#define WANT_WRITE 2
#define NONE 0
#define RETRY 1
#define HANDOFF 2

/* release ops */
#define LAST_READ 0
#define RELEASE_WRITE 1
#define DOWNGRADE_OP 2
#define ADMIT 3

/* plans */
#define NOBODY 0
#define WRITER 1
#define READERS 2

byte state = 0;
byte wqueued = 0;
byte rqueued = 0;
byte wstreak = 0;
bool lock = 0;          /* the bucket lock */
byte q[NPROC];          /* the queue, oldest first: thread ids */
byte qlen = 0;
byte want[NPROC];
byte grant[NPROC];      /* NONE until granted (then dequeued) */
byte pend[NPROC];       /* granted under the lock, delivered at unlock */
byte in_readers = 0;
byte in_writers = 0;
byte finished = 0;

/* drain_bit(next, had) */
#define DRAIN_BIT(next, had) \
    (((next) & RMASK) -> ((((next) & (WB | WW)) == WW) -> D : 0) : ((had) -> D : 0))

/* without_releaser(op, s) */
#define WITHOUT(op, s) \
    ((op) == LAST_READ -> ((s) & ~D) : \
     ((op) == RELEASE_WRITE -> ((s) & ~WB) : \
      ((op) == DOWNGRADE_OP -> (((s) & ~WB) + 1) : (s))))

inline invariants()
{
    assert(((state & WW) != 0) == (wqueued > 0));
    assert(((state & RQ) != 0) == (rqueued > 0));
    assert(!((state & D) && (state & WB)));
#ifndef LOOSE_D
    assert(!((state & RMASK) && !(state & WB)) || (((state & D) != 0) == ((state & WW) != 0)))
#endif
}

inline enqueue_back(me)
{
    q[qlen] = me;
    qlen++
}

inline enqueue_front(me)
{
    k = qlen;
    do
    :: k > 0 -> q[k] = q[k - 1]; k--
    :: else -> break
    od;
    q[0] = me;
    qlen++
}

/* Takes the waiter at index j out of the queue. */
inline dequeue_at(j)
{
    k = j;
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> break
    od;
    qlen--
}

inline count_writer_grant()
{
    if
    :: rqueued > 0 -> wstreak++
    :: else -> wstreak = 0
    fi
}

inline make_plan(op)
{
    left = WITHOUT(op, state);
    planned = 1;
    if
    :: left & (WB | D) -> plan = NOBODY
    :: else ->
        if
        :: wqueued > 0 && (left & (WB | RMASK | D)) == 0 &&
           (rqueued == 0 || wstreak < STREAK) -> plan = WRITER
        :: else ->
            if
            :: rqueued > 0 && (wqueued == 0 || (left & (WB | RMASK | D)) == 0) ->
                plan = READERS
            :: else -> plan = NOBODY
            fi
        fi
    fi
}

/* release_slow(op): park__unpark(release_select, release_finish). */
inline release_slow(op)
{
    atomic { /* select, bucket locked */
        !lock -> lock = 1;
        planned = 0; plan = NOBODY; granted = 0; handoff = 0;
        if
        :: qlen > 0 ->
            make_plan(op);
            seen = state;
            j = 0;
            do
            :: j < qlen && plan == WRITER ->
                if
                :: want[q[j]] == WANT_WRITE ->
                    if
                    :: handoff = 1 /* awake, or owed a hand-off */
                    :: handoff = 0 /* asleep: woken to retry */
                    fi;
                    pend[q[j]] = (handoff -> HANDOFF : RETRY);
                    dequeue_at(j);
                    break
                :: else -> j++
                fi
            :: j < qlen && plan == READERS ->
                if
                :: want[q[j]] == WANT_READ ->
                    pend[q[j]] = HANDOFF;
                    dequeue_at(j);
                    granted++;
                    if
                    :: granted == rqueued -> break
                    :: else
                    fi
                :: else -> j++
                fi
            :: else -> break
            od
        :: else
        fi
    };
    atomic { /* finish, still locked */
        if
        :: !planned -> make_plan(op); seen = state
        :: else
        fi;
        rqueued = rqueued - granted;
        if
        :: handoff -> wqueued--; count_writer_grant()
        :: else
        fi;
        if
        :: rqueued == 0 -> wstreak = 0
        :: else
        fi;
#ifdef HANDOFF_NO_W
        bits = (wqueued > 0 -> WW : 0) | (rqueued > 0 -> RQ : 0);
#else
        bits = (handoff -> WB : 0) | (wqueued > 0 -> WW : 0) | (rqueued > 0 -> RQ : 0);
#endif
#ifdef PLAN_STALE
        s = seen;
#else
        s = state;
#endif
        next = ((WITHOUT(op, s) & (WB | RMASK)) + granted) | bits;
        next = next | DRAIN_BIT(next, op != LAST_READ && (s & D));
        state = next;
        if
        :: op == DOWNGRADE_OP -> in_writers--; in_readers++
        :: else
        fi;
        invariants();
        lock = 0;
        for (k : 0 .. NPROC - 1) {
            if
            :: pend[k] != NONE -> grant[k] = pend[k]; pend[k] = NONE
            :: else
            fi
        }
    }
}

/* read_lock(_until): got = 1, or 0 if the deadline passed. */
inline read_lock()
{
    atomic { /* the inline CAS loop (read_wait's first try_read) */
        if
        :: !(state & (WB | WW | D)) -> state++; got = 1
        :: else -> got = 0
        fi
    };
    do
    :: got -> break
    :: !got && me == TREAD_PID -> break /* the deadline passed */
    :: else ->
        atomic { /* read validate and enqueue, bucket locked */
            !lock;
            if
            :: !(state & (WB | WW | D)) -> state++; got = 1 /* try_read */
            :: else ->
                state = state | RQ; rqueued++;
                want[me] = WANT_READ; enqueue_back(me);
                invariants()
            fi
        };
        if
        :: got -> break
        :: else
        fi;
        if
        :: atomic { grant[me] == HANDOFF -> grant[me] = NONE; got = 1 }; break
        :: atomic { /* the deadline passed while queued (grant beats it) */
                me == TREAD_PID && !lock && grant[me] == NONE && pend[me] == NONE ->
                j = 0;
                do
                :: q[j] == me -> break
                :: else -> j++
                od;
                dequeue_at(j);
                /* read_removed */
                rqueued--;
                if
                :: rqueued == 0 -> wstreak = 0; state = state & ~RQ
                :: else
                fi;
                invariants()
            };
            break
        fi
    od
}

inline read_unlock()
{
    atomic { old = state; state-- }; /* fetch_sub */
    if
    :: (old & (D | RMASK)) == (D | 1) -> release_slow(LAST_READ)
    :: else
    fi
}

/* write_lock(_until): got = 1, or 0 if the deadline passed. */
inline write_lock()
{
    atomic { /* the inline CAS 0 -> W (try_write_lock for the timed one) */
        if
        :: state == 0 -> state = WB; got = 1
        :: else -> got = 0
        fi
    };
    inflight = 0;
    do
    :: got -> break
    :: else ->
        if
        :: !inflight ->
            atomic { /* write_spin: try_write */
                if
                :: state == 0 -> state = WB; got = 1
                :: else
                fi
            };
            if
            :: got -> break
            :: !got && me == TIMED_PID -> break /* the deadline passed */
            :: !got
            fi
        :: else
        fi;
        atomic { /* write validate and enqueue, bucket locked */
            !lock;
            if
            :: inflight -> wqueued--
            :: else
            fi;
            s = state;
            if
            :: !(s & (WB | RMASK | D)) ->
                state = (s & ~WW) | WB | (wqueued > 0 -> WW : 0);
                count_writer_grant();
                got = 1
            :: else ->
                if
                :: !(s & WW) ->
#ifdef NO_DRAIN
                    state = s | WW
#else
                    state = s | WW | DRAIN_BIT(s | WW, s & D)
#endif
                :: else
                fi;
                wqueued++;
                want[me] = WANT_WRITE;
                if
                :: inflight -> enqueue_front(me)
                :: else -> enqueue_back(me)
                fi
            fi;
            inflight = 0;
            invariants()
        };
        if
        :: got -> break
        :: else
        fi;
        if
        :: atomic { grant[me] == HANDOFF -> grant[me] = NONE; got = 1 }; break
        :: atomic { grant[me] == RETRY -> grant[me] = NONE; inflight = 1 }
        :: atomic { /* the deadline passed while queued (grant beats it) */
                me == TIMED_PID && !lock && grant[me] == NONE && pend[me] == NONE ->
                j = 0;
                do
                :: q[j] == me -> break
                :: else -> j++
                od;
                dequeue_at(j);
                /* write_removed */
                admit = 0;
                wqueued--;
                if
                :: wqueued == 0 ->
                    s = state;
                    state = (s & ~(WW | D)) | DRAIN_BIT(s & ~WW, s & D);
                    admit = rqueued > 0 && !(s & WB)
                :: else
                fi;
                invariants()
            };
#ifndef NO_ADMIT
            if
            :: admit -> release_slow(ADMIT)
            :: else
            fi;
#endif
            break
        fi
    od
}

proctype Thread(byte me)
{
    byte i = 0, k, j, s, old, left, next, bits, seen, plan, granted;
    bool got, inflight, planned, handoff, admit;
    do
    :: i < ITERS ->
        if
        :: me < NWRITERS ->
            write_lock();
            if
            :: got ->
                atomic { in_writers++; assert(in_writers == 1 && in_readers == 0) };
#ifdef DOWNGRADE
                atomic { /* the inline downgrade W -> 1 */
                    if
                    :: state == WB -> state = 1; in_writers--; in_readers++; got = 0
                    :: else
                    fi
                };
                if
                :: got -> release_slow(DOWNGRADE_OP)
                :: else
                fi;
                assert(in_writers == 0);
                in_readers--;
                read_unlock()
#else
                in_writers--;
                atomic { /* the inline write_unlock W -> 0 */
                    if
                    :: state == WB -> state = 0; got = 0
                    :: else
                    fi
                };
                if
                :: got -> release_slow(RELEASE_WRITE)
                :: else
                fi
#endif
            :: else
            fi
        :: else ->
            read_lock();
            if
            :: got ->
                atomic { in_readers++; assert(in_writers == 0) };
                in_readers--;
                read_unlock()
            :: else
            fi
        fi;
        i++
    :: else -> break
    od;
    finished++
}

init
{
    byte i;
    atomic {
        for (i : 0 .. NPROC - 1) {
            run Thread(i)
        }
    }
    (finished == NPROC);
    assert(state == 0 && wqueued == 0 && rqueued == 0 && qlen == 0 && !lock)
}
