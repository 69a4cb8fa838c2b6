/* lib/rwlock_mostly.c: the read-mostly mode of park_rwlock (park/rwlock.h;
 * docs/design/rwlock.md, "Read-mostly mode"; protocol model:
 * tests/model/bias.pml).
 *
 * A biased lock (flags_ BIASED) keeps one read hold of its own in the state
 * word, the bias hold: to the state machine of lib/rwlock.c it is a lock
 * that one reader holds, so a writer's inline CAS from 0 fails and the
 * writer comes here first. Readers of a biased lock do not touch the lock:
 * each publishes its hold in the process-wide table park__rwlock_readers, in
 * one of PROBES slots hashed from the lock and the thread, and checks the
 * bias again. A writer revokes the bias: it clears BIASED (setting
 * REVOKING), moves every hold of the lock it finds in the table into the
 * state word (one read hold each), clears REVOKING, and gives up the bias
 * hold like any reader; then it takes the lock as in the plain mode.
 *
 * The race of a reader publishing while a writer revokes is Dekker's: the
 * reader stores its slot and loads the flags, the writer stores the flags
 * and loads every slot, all sequentially consistent. Either the reader sees
 * the bias gone (it withdraws its slot, or finds the writer has moved it
 * into the word already, and then holds the lock there), or the writer sees
 * the reader's slot and moves it.
 *
 * Holds are interchangeable: a release takes away one hold of the lock,
 * wherever it is. A read_unlock looks in its own thread's slots first, then,
 * while the lock is biased or being revoked, searches the whole table (a
 * hold taken by another thread, or a state hold of its own), and takes a
 * hold from the state word only if the table has none. So the bias hold is
 * never taken by a release: whenever a releaser finds no hold in the table,
 * the holds that remain are in the word besides the bias hold.
 *
 * A reader that finds the lock unbiased takes its hold from the word, as a
 * plain reader (inline: park/rwlock.h, park__rwlock_read_route). One that
 * finds the word in use by another reader or a writer comes here and
 * biases the lock again (taking a new bias hold) once the revocation's
 * inhibition has passed; a lone reader never does, as a bias would only
 * make its reads slower. The inhibition is INHIBIT times the last revocation's
 * length (at least MIN_INHIBIT_NS), doubled for each revocation in a row
 * that came soon after the inhibition before it ended (up to MAX_INHIBIT_NS;
 * inhibition_for), kept in flags_ at 1 µs resolution. The
 * re-bias is made under lib/wait's bucket lock of the lock, and only while
 * no writer is queued or in flight; a writer's validate, under that lock,
 * refuses to queue on a biased lock (the writer revokes again), so no
 * writer ever sleeps behind a bias hold, and readers that use the table
 * (which ignore WRITER_WAITING) never hold a queued writer back. */
#include <errno.h>

#include <park/rwlock.h>

#include "os/os.h"
#include "profile/order.h"
#include "rwlock_impl.h"
#include "wait/wait.h"

#define TABLE_SIZE 4096u
#define PROBES 4u                 /* slots a reader may use: half a cache line, one group */
#define INHIBIT 9u                /* re-bias after INHIBIT times the revocation's length */
#define MIN_INHIBIT_NS 50000u     /* and not before: the revoking writer queues first */
#define SHORT_BIAS 4u             /* a bias revoked within 4 inhibitions of its start was short */
#define MAX_LEVEL 8u              /* the inhibition doubles at most 8 times in a row */
#define MAX_INHIBIT_NS (1u << 24) /* and stays below about 17 ms */
#define TIME_SHIFT 4              /* flags_ bits 4-31: when re-biasing is allowed again */
#define TIME_UNIT 10              /* in units of 2^10 ns */
#define TIME_MASK (~((1u << TIME_SHIFT) - 1))
#define FAR_AHEAD ((1u << 20) << TIME_SHIFT) /* about 1 s: a wrapped time */

_Static_assert(PARK__RW_MOSTLY < (1u << TIME_SHIFT) && PARK__RW_BIASED < (1u << TIME_SHIFT) &&
                   PARK__RW_REVOKING < (1u << TIME_SHIFT),
               "the flags below the time");
_Static_assert((TABLE_SIZE & (TABLE_SIZE - 1)) == 0 && TABLE_SIZE % PROBES == 0,
               "groups of PROBES slots");

/* The readers' table, one for the process (exported: a second copy of the
 * library in the process uses this one). Never allocated: it is 32 KiB of
 * zeroes in the library's data. */
PARK_API park_rwlock_t *park__rwlock_readers[TABLE_SIZE] __attribute__((aligned(64)));

/* The calling thread's identity for the hash: the address of a
 * thread-local byte (initial-exec: one instruction to find). */
static _Thread_local char self __attribute__((tls_model("initial-exec")));

static park_rwlock_t **group_of(const park_rwlock_t *rw)
{
    uint64_t x = ((uintptr_t)rw >> 3) * 0x9e3779b97f4a7c15u;
    x ^= ((uintptr_t)&self >> 4) * 0xc2b2ae3d27d4eb4fu;
    x ^= x >> 29;
    return &park__rwlock_readers[(uint32_t)(x >> 32) & (TABLE_SIZE - PROBES)];
}

static uint32_t time_bits(park_time_t t)
{
    return (uint32_t)(t >> TIME_UNIT) << TIME_SHIFT;
}

/* flags f allow re-biasing at now (or hold a time so far ahead that it
 * wrapped). */
static bool inhibition_over(uint32_t f, park_time_t now)
{
    uint32_t ahead = (f & TIME_MASK) - time_bits(now);
    return ahead == 0 || ahead > FAR_AHEAD;
}

/* How many revocations in a row came soon after the inhibition before
 * them ended, per lock: a heuristic, so kept beside the lock rather than in
 * it (the lock has no bits to spare), in a small table hashed by address.
 * Locks that share an entry share their history; that costs at most a
 * longer or shorter inhibition, never correctness. Only revoking writers,
 * one per lock at a time, write an entry. */
static uint8_t inhibit_levels[256];

static uint8_t *level_of(const park_rwlock_t *rw)
{
    return &inhibit_levels[(((uintptr_t)rw >> 3) * 0x9e3779b97f4a7c15u) >> 56];
}

/* The inhibition after a revocation that started at t0 and scanned for
 * `scan` ns, of a lock whose flags were f (biased: the time in them is
 * when its last inhibition ended, so the bias lived at most t0 minus
 * that). A bias revoked within SHORT_BIAS base inhibitions of that time
 * was not worth its revocation (the writes come too often: the bias only
 * sends readers through the table and writers through a scan), so the
 * inhibition doubles; a bias that lived longer resets it. BRAVO's rule
 * alone (a multiple of the scan) leaves a lock written every few
 * microseconds re-biased every 50 µs. */
static park_time_t inhibition_for(park_rwlock_t *rw, uint32_t f, park_time_t t0, park_time_t scan)
{
    park_time_t base = INHIBIT * scan;
    if (base < MIN_INHIBIT_NS)
        base = MIN_INHIBIT_NS;
    if (base > MAX_INHIBIT_NS)
        base = MAX_INHIBIT_NS;
    /* Unsigned: the times wrap (a bias that lived a multiple of 4 minutes
     * looks short once). A lock biased at init has time 0: long. */
    uint32_t lived = (time_bits(t0) - (f & TIME_MASK)) >> TIME_SHIFT;
    uint8_t *level = level_of(rw);
    unsigned l = __atomic_load_n(level, __ATOMIC_RELAXED);
    if ((park_time_t)lived << TIME_UNIT < SHORT_BIAS * base)
        l = l < MAX_LEVEL ? l + 1 : MAX_LEVEL;
    else
        l = 0;
    __atomic_store_n(level, (uint8_t)l, __ATOMIC_RELAXED);
    park_time_t inhibit = base << l;
    return inhibit < MAX_INHIBIT_NS ? inhibit : MAX_INHIBIT_NS;
}

uint8_t park__rwlock_inhibit_level(const park_rwlock_t *rw)
{
    return __atomic_load_n(level_of(rw), __ATOMIC_RELAXED);
}

/* Read-mostly locks exist: the inline read paths look at each lock's
 * flags from now on (park__rwlock_modes, park/rwlock.h). */
static void mostly_in_use(void)
{
    if (!(__atomic_load_n(&park__rwlock_modes, __ATOMIC_RELAXED) & PARK__RW_MODE_MOSTLY))
        __atomic_fetch_or(&park__rwlock_modes, PARK__RW_MODE_MOSTLY, __ATOMIC_RELAXED);
}

/* ---- readers -------------------------------------------------------------- */

/* A read hold through the table of a lock seen biased: true if the caller
 * holds the lock (published and still biased, or moved into the word by a
 * revoking writer), false if it must take the hold from the word. */
static bool biased_read(park_rwlock_t *rw)
{
    park_rwlock_t **g = group_of(rw);
    for (unsigned i = 0; i < PROBES; i++) {
        park_rwlock_t *expect = NULL;
        if (__atomic_load_n(&g[i], __ATOMIC_RELAXED) != NULL)
            continue;
        /* seq_cst, with the load below: the reader's side of the Dekker
         * race with a revoking writer (its flags CAS, then its loads of
         * the slots). */
        if (!__atomic_compare_exchange_n(&g[i], &expect, rw, false, __ATOMIC_SEQ_CST,
                                         __ATOMIC_RELAXED))
            continue;
        /* Still biased: held. seq_cst (so acquire): pairs with the CAS that
         * biased the lock, made after an acquisition that followed the last
         * writer's release. */
        if (__atomic_load_n(&rw->flags_, __ATOMIC_SEQ_CST) & PARK__RW_BIASED)
            return true;
        /* A writer is revoking: withdraw, unless it moved the hold into the
         * word already (then the word holds it for us). */
        expect = rw;
        return !__atomic_compare_exchange_n(&g[i], &expect, NULL, false, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED);
    }
    return false; /* every slot of the group in use: the word */
}

/* Takes away one hold of rw from the table: the caller's own slots first,
 * then, while holds may be in the table, all of it. False if none. */
static bool table_release(park_rwlock_t *rw)
{
    park_rwlock_t **g = group_of(rw);
    for (unsigned i = 0; i < PROBES; i++) {
        park_rwlock_t *expect = rw;
        /* release: pairs with the revoking writer's acquire of the slot (or
         * of the null it reads there). */
        if (__atomic_load_n(&g[i], __ATOMIC_RELAXED) == rw &&
            __atomic_compare_exchange_n(&g[i], &expect, NULL, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return true;
    }
    /* A hold this call releases was taken (by whoever took it) after a
     * load that saw BIASED, which happened before this call; a later value
     * is REVOKING, or no bias once every table hold is in the word.
     * acquire: pairs with the release that clears REVOKING, so the holds it
     * moved into the word are seen there by the caller's word CAS. */
    if (!(__atomic_load_n(&rw->flags_, __ATOMIC_ACQUIRE) & (PARK__RW_BIASED | PARK__RW_REVOKING)))
        return false;
    for (unsigned i = 0; i < TABLE_SIZE; i++) {
        park_rwlock_t *expect = rw;
        /* acquire: a slot a revoking writer emptied is seen with the hold it
         * added to the word before (its slot CAS is a release). */
        if (__atomic_load_n(&park__rwlock_readers[i], __ATOMIC_ACQUIRE) == rw &&
            __atomic_compare_exchange_n(&park__rwlock_readers[i], &expect, NULL, false,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

/* Bucket locked (park__unpark's finish, which runs whether or not anyone is
 * queued): biases the lock again unless a writer is queued or in flight.
 * Queued writers' validate runs under the same lock and refuses to queue on
 * a biased lock, so no writer ever sleeps behind a bias hold. The bias hold
 * is a read hold like any other: taken only while readers may enter. */
static unsigned rebias_select(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    (void)w;
    return PARK__SELECT_STOP;
}

static void rebias_finish(void *ctx, bool more)
{
    park_rwlock_t *rw = ctx;
    (void)more;
    if (rw->wqueued_)
        return;
    uint32_t f = __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED);
    if ((f & (PARK__RW_BIASED | PARK__RW_REVOKING)) || !inhibition_over(f, park_now()))
        return;
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    if (!park__rwlock_try_read(rw, &s))
        return;
    /* seq_cst (so release): readers that see BIASED see what the holders
     * before it wrote. Only the tracker's bit may change meanwhile: revoking
     * needs BIASED, which only this lock's holders set. */
    while (!__atomic_compare_exchange_n(&rw->flags_, &f, f | PARK__RW_BIASED, true,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
}

/* Reads from the word between two looks at the clock, per thread: an
 * unbiased lock's readers would otherwise pay a clock read each. */
#define REBIAS_EVERY 32u /* a power of 2 */
static _Thread_local uint8_t rebias_tick __attribute__((tls_model("initial-exec")));

/* After a read hold taken from the word of a lock seen unbiased (flags f),
 * which another reader or a writer was using: biases it again once the
 * inhibition is over (looked at every REBIAS_EVERY such reads of the
 * thread). */
static void maybe_rebias(park_rwlock_t *rw, uint32_t f)
{
    if ((f & (PARK__RW_BIASED | PARK__RW_REVOKING)) || (++rebias_tick & (REBIAS_EVERY - 1)) != 0 ||
        !inhibition_over(f, park_now()))
        return;
    park__unpark(rw, rebias_select, rebias_finish, rw);
}

int park__rwlock_mostly_read(park_rwlock_t *rw, park_time_t deadline, bool try_only)
{
    uint32_t f = __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED);
    if ((f & PARK__RW_BIASED) && biased_read(rw))
        return 0;
    /* From the word. Word in use (another reader, or a writer): readers
     * meet here, and only then may a bias pay. An unbiased lock's reads
     * come here inline only when their one try failed (park/rwlock.h:
     * park__rwlock_read_route); a lone reader's stay inline and never
     * re-bias the lock, which would only make them slower. */
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    bool met = s != 0;
    int r;
    if (park__rwlock_try_read(rw, &s))
        r = 0;
    else if (try_only)
        r = EBUSY;
    else
        r = park__rwlock_read_wait(rw, deadline);
    if (r == 0 && met)
        maybe_rebias(rw, f);
    return r;
}

/* A release found at most one hold in the word and none in the table: is
 * that one the bias hold (misuse), or a hold of the word's? The word and
 * the flags are read as one snapshot, seqlock-style: the flags again after
 * the word, until they are unchanged. The flags never repeat a value over
 * a revocation and a re-bias (each revocation writes a later time, and a
 * re-bias waits for it; the time wraps after 4 minutes), so an unchanged
 * flags word means no bias hold came or went meanwhile. BIASED or
 * REVOKING in it means the bias hold is in the word (it goes only after
 * REVOKING is cleared). *s: the word read. seq_cst: the loads in order. */
static bool only_the_bias_holds(park_rwlock_t *rw, uint32_t *s)
{
    uint32_t f;
    do {
        f = __atomic_load_n(&rw->flags_, __ATOMIC_SEQ_CST);
        *s = __atomic_load_n(&rw->state_, __ATOMIC_SEQ_CST);
    } while (__atomic_load_n(&rw->flags_, __ATOMIC_SEQ_CST) != f);
    uint32_t bias = (f & (PARK__RW_BIASED | PARK__RW_REVOKING)) ? 1 : 0;
    return (*s & PARK__RW_READERS_MASK) <= bias;
}

void park__rwlock_mostly_read_unlock(park_rwlock_t *rw)
{
    /* Neither biased nor being revoked: every table hold is in the word
     * (acquire: pairs with the release that cleared REVOKING), so the
     * release is the plain one. The bias hold may still be there, on its
     * way out; taking a hold of the word is right either way. */
    if (!(__atomic_load_n(&rw->flags_, __ATOMIC_ACQUIRE) & (PARK__RW_BIASED | PARK__RW_REVOKING))) {
        park__rwlock_state_read_unlock(rw);
        return;
    }
    if (table_release(rw))
        return;
    /* A hold in the word: as park__rwlock_state_read_unlock, but the bias
     * hold is not the caller's to give up. */
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    for (;;) {
        if ((s & PARK__RW_READERS_MASK) <= 1 && only_the_bias_holds(rw, &s))
            park__rwlock_read_unlock_none(rw);
        /* release: as the inline read_unlock. */
        if (__atomic_compare_exchange_n(&rw->state_, &s, s - PARK__RW_READER, true,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            break;
    }
    if ((s & (PARK__RW_DRAIN | PARK__RW_READERS_MASK)) == (PARK__RW_DRAIN | PARK__RW_READER))
        park__rwlock_read_unlock_last(rw);
}

/* ---- writers -------------------------------------------------------------- */

void park__rwlock_revoke(park_rwlock_t *rw)
{
    uint32_t f = __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED);
    do {
        if (!(f & PARK__RW_BIASED))
            return; /* not biased, or another writer revokes (its bias hold
                       keeps everyone out of the word until it is done) */
        /* seq_cst: the writer's side of the Dekker race (biased_read). */
    } while (!__atomic_compare_exchange_n(&rw->flags_, &f,
                                          (f & ~PARK__RW_BIASED) | PARK__RW_REVOKING, true,
                                          __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    mostly_in_use(); /* a lock initialised statically (PARK_RWLOCK_INIT_READ_MOSTLY) */
    park_time_t t0 = park_now();
    for (unsigned i = 0; i < TABLE_SIZE; i++) {
        /* seq_cst load: after the flags CAS (Dekker). A hold moves into the
         * word before it leaves its slot, so that it is always somewhere a
         * release can find it: the word gains a read hold first (the bias
         * hold keeps the count from 0 meanwhile), then the slot is emptied,
         * and if a release emptied it first, the word's hold goes again
         * (never the last out of a drain: the bias hold is still there). */
        if (__atomic_load_n(&park__rwlock_readers[i], __ATOMIC_SEQ_CST) != rw)
            continue;
        __atomic_fetch_add(&rw->state_, PARK__RW_READER, __ATOMIC_RELAXED);
        park_rwlock_t *expect = rw;
        /* acq_rel: acquires the reader's publication; releases the add
         * above to a release that finds the slot empty. */
        if (!__atomic_compare_exchange_n(&park__rwlock_readers[i], &expect, NULL, false,
                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            __atomic_fetch_sub(&rw->state_, PARK__RW_READER, __ATOMIC_RELAXED);
    }
    park_time_t t1 = park_now();
    /* f: the flags the CAS above replaced (a successful CAS leaves them). */
    uint32_t until = time_bits(t1 + inhibition_for(rw, f, t0, t1 - t0));
    f = __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED);
    /* release: a reader that reads the cleared REVOKING finds every table
     * hold of the lock in the word. */
    while (!__atomic_compare_exchange_n(&rw->flags_, &f,
                                        (f & ~(PARK__RW_REVOKING | TIME_MASK)) | until, true,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
    park__rwlock_state_read_unlock(rw); /* the bias hold */
}

int park__rwlock_mostly_destroy(park_rwlock_t *rw)
{
    /* acquire, here and in the table: after every release (the word's
     * fetch_sub, a slot's CAS), as the plain destroy. */
    if (__atomic_load_n(&rw->state_, __ATOMIC_ACQUIRE) != PARK__RW_READER)
        return EBUSY;
    for (unsigned i = 0; i < TABLE_SIZE; i++)
        if (__atomic_load_n(&park__rwlock_readers[i], __ATOMIC_ACQUIRE) == rw)
            return EBUSY;
    if (park__order_checking())
        park__order_forget(rw); /* the lock leaves the order graph */
    return 0;
}

void park__rwlock_make_read_mostly(park_rwlock_t *rw)
{
    mostly_in_use();
    /* Unbiased, with no inhibition: the next reader that finds another
     * reader's hold (or a writer) in the word biases it (under the bucket
     * lock, as any re-bias; one such read in 32 of a thread looks).
     * Holds taken before are in the word, where a release finds them.
     * relaxed: the bias itself is published by the re-bias. */
    __atomic_fetch_or(&rw->flags_, PARK__RW_MOSTLY, __ATOMIC_RELAXED);
}

void park_rwlock_init_read_mostly(park_rwlock_t *rw)
{
    mostly_in_use();
    park_rwlock_init(rw);
    __atomic_store_n(&rw->state_, PARK__RW_READER, __ATOMIC_RELAXED); /* the bias hold */
    __atomic_store_n(&rw->flags_, PARK__RW_MOSTLY | PARK__RW_BIASED, __ATOMIC_RELAXED);
}
