/* tests/model/bias.pml: the bias protocol of park_rwlock's read-mostly mode
 * (lib/rwlock_mostly.c, and its callers in lib/rwlock.c and
 * lib/rwlock_async.c), for Spin. Run by check.sh.
 *
 * Modelled: NREADERS reader threads, each taking and releasing a read hold
 * ITERS times, and NWRITERS writer threads taking the write hold once, on
 * one lock that starts biased (park_rwlock_init_read_mostly). With -DXREL
 * the first reader's first hold is released by another thread (the
 * releaser, to which the reader hands it: holds are not thread-affine);
 * with -DSHARED every thread's group also holds one shared slot, after its
 * own (hashes that collide: a release may take another thread's hold, a
 * reader may find its group full); with -DTRY_WRITER the first writer
 * uses park_rwlock_try_write_lock.
 *   - The lock, abstracted to what the bias touches: count (the read holds
 *     in the word, the bias hold included), W (write-held), wqueued
 *     (writers queued: WW, and D behind readers), and the flags: BIASED,
 *     REVOKING and epoch (the time of the next re-bias, which every
 *     revocation moves on: the flags word never takes a value again).
 *   - The readers' table: one slot per reader (its group) and, with
 *     SHARED, a shared one; a slot holds the lock or NULL. The releaser's
 *     group is the shared slot (none without SHARED).
 *   - A reader (park__rwlock_mostly_read; the inline read of a lock seen
 *     neither biased nor being revoked makes the same steps: the flags,
 *     then the word): loads the flags; if BIASED,
 *     biased_read: per slot of its group, the CAS NULL -> lock (a slot in
 *     use: the next), then the re-check of BIASED (held), else the
 *     withdrawal CAS lock -> NULL (done: the word; failed: a revoker moved
 *     the hold into the word, or a release took it: held). Otherwise, or
 *     if it withdrew or its group was full, the word (park__rwlock_try_read
 *     on a guessed free word, then read_wait): count++ once neither W nor
 *     a queued writer holds it back. After a hold from the word on a lock
 *     it saw neither biased nor being revoked, maybe_rebias: now or never
 *     (the inhibition, and whether the word was in use, nondeterministic),
 *     rebias_finish under the bucket
 *     lock (one atomic step): with no writer counted, no BIASED, no
 *     REVOKING and a word readers may enter, the bias hold (count++) and
 *     BIASED.
 *   - A release (park__rwlock_mostly_read_unlock, or inline): first loads the flags;
 *     if neither BIASED nor REVOKING (every table hold is in the word),
 *     the plain release (park__rwlock_state_read_unlock): count-- in one
 *     fetch_sub, misuse only if count was 0 (the last out hands over to
 *     a queued writer), without looking at the table. Otherwise
 *     (table_unlock) its group's slots (CAS lock -> NULL each), then, if
 *     the flags (loaded again) say BIASED or REVOKING, the whole table,
 *     slot by slot; found nowhere, the word: it loads the word, then the
 *     flags (the bias: 1 while BIASED or REVOKING), and takes the CAS
 *     count -> count-1 from the word it read. A word of no more than the
 *     bias hold is looked at again, between two loads of the flags that
 *     must be equal (else again), and is misuse (the code aborts) only
 *     then.
 *   - A writer (write_wait; async_try_write is the same): loads the flags;
 *     if BIASED, revokes (park__rwlock_revoke): BIASED -> REVOKING in one
 *     CAS, then per slot a load, and for a slot holding the lock the
 *     word's count++ first, then the CAS lock -> NULL, and count-- again if
 *     the CAS failed (withdrawn or released meanwhile); then REVOKING
 *     cleared (and the time moved on), then the bias hold given up
 *     (count--). Then write validate (one atomic step, under the bucket
 *     lock): BIASED again: back to the revocation; a free word (count 0,
 *     no W): W; else queued (wqueued++), to take W once count is 0 and W
 *     clear (the hand-over of the last reader out, or of the writer
 *     before). Then its section, and the write unlock (W cleared). A
 *     try_write_lock: the CAS 0 -> W; a word of exactly one hold: revoke if
 *     biased, then one try of 0 -> W.
 * Each atomic block is one step of the code (a load, a CAS, a fetch_add),
 * or a whole bucket-lock hold; between them the other threads interleave.
 * Every access is sequentially consistent (Spin's interleaving), which is
 * what the code relies on where it matters: the reader's publication CAS
 * and re-check load against the revoker's flags CAS and slot loads
 * (Dekker's race) are seq_cst there. Abstracted: the queue and the
 * release policy of lib/rwlock.c (tests/model/rwlock.pml models them),
 * spinning (one try), timeouts, the inhibition's clock, the tracker.
 *
 * Checked:
 *   - exclusion: a writer in its section sees no reader and no other
 *     writer, a reader (or a hold handed to the releaser) sees no writer;
 *   - the bias hold: while BIASED or REVOKING the word keeps at least one
 *     hold (a release never takes it; the revoker finds it to give up),
 *     and a legitimate release is never called misuse (finding no hold
 *     but the bias hold);
 *   - no thread blocked forever (invalid end state): a writer never sleeps
 *     behind a bias hold nobody gives up;
 *   - at the end no hold is lost or left: count is 1 if biased, else 0,
 *     every slot is NULL, nobody holds or is queued, REVOKING is clear.
 *
 * Broken variants (must fail):
 *   NO_RECHECK   the reader holds as soon as it has published, without
 *                loading the flags again: a revoker that scanned its slot
 *                before lets a writer in beside it (exclusion)
 *   NO_MOVE      the revoker clears BIASED without moving the table's
 *                holds into the word: the writer enters beside the table
 *                readers (exclusion)
 *   UNLOCK_NO_SEARCH  a release that finds no hold in its group takes one
 *                from the word without searching the table: with XREL
 *                the releaser finds the bias hold alone (misuse)
 *   VALIDATE_IGNORES_BIAS  write validate queues on a lock biased again
 *                since the revocation: the writer sleeps behind the bias
 *                hold, and the readers behind it (invalid end state)
 *   MOVE_THEN_ADD  the revoker clears a slot, then adds its hold to the
 *                word: a reader whose withdrawal failed on that slot, or
 *                the slot's holder, releasing in between finds its hold
 *                nowhere and only the bias hold in the word (misuse)
 *   STALE_WORD   a release judges misuse on the word it read before the
 *                flags: a re-bias in between (a bias hold that came after
 *                that word) makes a legitimate release misuse
 *   REREAD_WORD  ... and judges it on a second load of the word equal to
 *                the first: the word may have gone through a re-bias and
 *                a revocation and come back (misuse)
 *   FAST_WHILE_REVOKING  the plain release is taken when the flags say
 *                not BIASED, REVOKING or not: a table reader releasing
 *                while its hold is not yet moved takes the bias hold */

#ifndef NREADERS
#define NREADERS 2
#endif
#ifndef NWRITERS
#define NWRITERS 1
#endif
#ifndef ITERS
#define ITERS 1
#endif
#ifdef SHARED
#define NSLOTS (NREADERS + 1)
#define SH NREADERS /* the shared slot */
/* the slots of thread me's group, in order: its own, then the shared one */
#define NPROBES(me) ((me) < NREADERS -> 2 : 1)
#define PROBE(me, k) (((me) < NREADERS && (k) == 0) -> (me) : SH)
#else
#define NSLOTS NREADERS
#define NPROBES(me) ((me) < NREADERS -> 1 : 0)
#define PROBE(me, k) (me)
#endif
#ifdef XREL
#define NPROC (NREADERS + NWRITERS + 1)
#else
#define NPROC (NREADERS + NWRITERS)
#endif
#define RELEASER (NREADERS + NWRITERS)
#ifdef VALIDATE_IGNORES_BIAS
#define REFUSE_BIASED 0
#else
#define REFUSE_BIASED 1
#endif

byte count = 1; /* the bias hold */
bool W = 0;
byte wqueued = 0;
bool biased = 1;
bool revoking = 0;
byte epoch = 0; /* revocations done: the time in the flags changes */
bit slot[NSLOTS];
byte in_readers = 0; /* readers inside, and holds handed on */
byte in_writers = 0;
byte finished = 0;
chan hand = [1] of { bit }; /* a hold handed to the releaser */

/* The flags word's value: the bits and the time of the next re-bias,
 * which every revocation moves on. */
#define FLAGS ((biased -> 1 : 0) + (revoking -> 2 : 0) + 4 * epoch)

/* While BIASED or REVOKING the bias hold is in the word. */
#define BIAS_KEPT (!(biased || revoking) || count >= 1)

inline read_lock()
{
    atomic { fb = biased; fr = revoking }; /* f: the flags, relaxed */
    held = 0;
    if
    :: fb -> /* biased_read */
        k = 0;
        do
        :: k < NPROBES(me) ->
            p = PROBE(me, k);
            atomic { /* seq_cst CAS NULL -> lock (skipped if in use) */
                if
                :: !slot[p] -> slot[p] = 1; pub = 1
                :: else -> pub = 0
                fi
            };
            if
            :: pub ->
#ifdef NO_RECHECK
                held = 1;
#else
                if
                :: biased -> held = 1 /* the seq_cst re-check: still biased */
                :: else ->
                    atomic { /* withdraw; gone (moved, or taken by a release): held */
                        if
                        :: slot[p] -> slot[p] = 0
                        :: else -> held = 1
                        fi
                    }
                fi;
#endif
                break
            :: else -> k++
            fi
        :: else -> break /* the group full: the word */
        od
    :: else
    fi;
    if
    :: !held ->
        atomic { !W && wqueued == 0 -> count++ }; /* read_wait */
        if
        :: !fb && !fr -> /* maybe_rebias */
            if
            :: atomic { /* rebias_finish, bucket locked */
                    if
                    :: wqueued == 0 && !biased && !revoking && !W -> count++; biased = 1
                    :: else
                    fi
                }
            :: skip /* still inhibited */
            fi
        :: else
        fi
    :: else
    fi
}

/* The release while BIASED or REVOKING: table_release, then the word with
 * the seqlock-style misuse check (only_the_bias_holds). */
inline table_unlock()
{
    found = 0;
    k = 0;
    do /* the caller's group */
    :: k < NPROBES(me) ->
        p = PROBE(me, k);
        atomic {
            if
            :: slot[p] -> slot[p] = 0; found = 1
            :: else
            fi
        };
        if
        :: found -> break
        :: else -> k++
        fi
    :: else -> break
    od;
#ifndef UNLOCK_NO_SEARCH
    if
    :: !found && (biased || revoking) -> /* the whole table */
        p = 0;
        do
        :: p < NSLOTS ->
            atomic {
                if
                :: slot[p] -> slot[p] = 0; found = 1
                :: else
                fi
            };
            if
            :: found -> break
            :: else -> p++
            fi
        :: else -> break
        od
    :: else
    fi;
#endif
    if
    :: !found -> /* the word */
        s = count;
        do
        :: bias = (biased || revoking -> 1 : 0);
            if
            :: s > bias ->
                atomic { /* CAS s -> s - 1 */
                    if
                    :: count == s -> count--; found = 1; assert(BIAS_KEPT)
                    :: else -> s = count
                    fi
                };
                if
                :: found -> break
                :: else
                fi
            :: else -> /* only the bias hold: misuse, if the view holds */
#if defined(STALE_WORD)
                assert(s > bias) /* park__rwlock_read_unlock_none */
#elif defined(REREAD_WORD)
                atomic {
                    if
                    :: count == s -> assert(s > bias)
                    :: else -> s = count
                    fi
                }
#else
                do /* the word between two equal loads of the flags */
                :: f1 = FLAGS;
                    s = count;
                    if
                    :: f1 == FLAGS -> break
                    :: else
                    fi
                od;
                bias = (f1 & 3 -> 1 : 0);
                assert(s > bias) /* park__rwlock_read_unlock_none */
#endif
            fi
        od
    :: else
    fi
}

/* park__rwlock_mostly_read_unlock: the flags first; neither BIASED nor
 * REVOKING, the plain release (park__rwlock_state_read_unlock). */
inline read_unlock()
{
    atomic { fb = biased; fr = revoking }; /* acquire */
    if
#ifdef FAST_WHILE_REVOKING
    :: !fb -> /* also while REVOKING */
#else
    :: !fb && !fr -> /* every table hold is in the word */
#endif
        atomic { /* fetch_sub; no hold at all: read_unlock_none */
            assert(count >= 1);
            count--;
            assert(BIAS_KEPT)
        }
    :: else -> table_unlock()
    fi
}

inline revoke()
{
    atomic { /* seq_cst CAS BIASED -> REVOKING */
        if
        :: biased -> biased = 0; revoking = 1; rv = 1
        :: else -> rv = 0 /* not biased, or another writer revokes */
        fi
    };
    if
    :: rv ->
        p = 0;
        do
        :: p < NSLOTS ->
#ifndef NO_MOVE
#ifdef MOVE_THEN_ADD
            atomic {
                if
                :: slot[p] -> slot[p] = 0; moved = 1
                :: else -> moved = 0
                fi
            };
            if
            :: moved -> count++
            :: else
            fi;
#else
            if
            :: slot[p] -> /* seq_cst load */
                count++; /* the hold in the word first */
                atomic {
                    if
                    :: slot[p] -> slot[p] = 0; moved = 1
                    :: else -> moved = 0
                    fi
                };
                if
                :: !moved -> /* withdrawn or released meanwhile: back */
                    atomic { assert(count >= 2); count-- }
                :: else
                fi
            :: else
            fi;
#endif
#endif
            p++
        :: else -> break
        od;
        atomic { revoking = 0; epoch++ }; /* and the time of the next re-bias */
        atomic { assert(count >= 1); count-- } /* the bias hold */
    :: else
    fi
}

inline write_lock()
{
    do
    :: if
        :: biased -> revoke()
        :: else
        fi;
        atomic { /* write validate, bucket locked */
            if
            :: biased && REFUSE_BIASED -> again = 1
            :: else ->
                again = 0;
                if
                :: count == 0 && !W -> W = 1; got = 1
                :: else -> wqueued++; got = 0
                fi
            fi
        };
        if
        :: !again -> break
        :: else
        fi
    od;
    if
    :: !got -> atomic { count == 0 && !W -> W = 1; wqueued--; got = 1 } /* handed over */
    :: else
    fi
}

/* park_rwlock_try_write_lock: the inline CAS 0 -> W; a word of one hold
 * exactly goes to try_write_lock_slow: revoke if biased, then one try. */
inline try_write_lock()
{
    atomic {
        if
        :: count == 0 && !W -> W = 1; got = 1; again = 0
        :: count == 1 && !W -> got = 0; again = 1
        :: else -> got = 0; again = 0
        fi
    };
    if
    :: again ->
        if
        :: biased -> revoke()
        :: else
        fi;
        atomic {
            if
            :: count == 0 && !W -> W = 1; got = 1
            :: else
            fi
        }
    :: else
    fi
}

proctype Thread(byte me)
{
    byte i = 0, k, p, s, f1;
    bool fb, fr, held, pub, found, bias, rv, moved, again, got;
    if
    :: me < NREADERS ->
        do
        :: i < ITERS ->
            read_lock();
            atomic { in_readers++; assert(in_writers == 0) };
#ifdef XREL
            if
            :: me == 0 && i == 0 -> hand ! 1 /* released elsewhere */
            :: else -> in_readers--; read_unlock()
            fi;
#else
            in_readers--;
            read_unlock();
#endif
            i++
        :: else -> break
        od
    :: me >= NREADERS && me < NREADERS + NWRITERS ->
#ifdef TRY_WRITER
        if
        :: me == NREADERS -> try_write_lock()
        :: else -> write_lock()
        fi;
#else
        write_lock();
#endif
        if
        :: got ->
            atomic { in_writers++; assert(in_writers == 1 && in_readers == 0) };
            in_writers--;
            W = 0
        :: else
        fi
    :: else -> /* the releaser */
        hand ? _;
        in_readers--;
        read_unlock()
    fi;
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
    assert(!W && wqueued == 0 && !revoking && in_readers == 0 && in_writers == 0);
    assert(count == (biased -> 1 : 0));
    for (i : 0 .. NSLOTS - 1) {
        assert(slot[i] == 0)
    }
}
