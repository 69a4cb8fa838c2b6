/* tests/unit/rwlock_test.c: park_rwlock, one behaviour per test.
 *
 * Threads are ordered by handshakes. "Thread T is parked" is observed in the
 * wait queue itself (queued_on counts the waiters of the lock's key), so
 * waiters are queued in a known order and no verdict depends on a sleep.
 * A release decides its grants under the queue's lock before it returns, so
 * right after it, queued_on tells exactly who was left waiting. The only
 * timing asserted is that a timed lock never gives up before its deadline
 * (and, generously, not seconds after). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <park/park.h>

#include "rwlock_impl.h"
#include "wait/wait.h"

#include "test.h"

/* Built a second time with PARK_TEST_READ_MOSTLY (rwlock_test_read_mostly):
 * every lock of these tests is then a read-mostly lock (park_rwlock_init_
 * read_mostly), which must keep every guarantee of the plain mode. */
#ifdef PARK_TEST_READ_MOSTLY
#undef PARK_RWLOCK_INIT
#define PARK_RWLOCK_INIT PARK_RWLOCK_INIT_READ_MOSTLY
#define park_rwlock_init park_rwlock_init_read_mostly
#endif

/* How many waiters are queued on the lock now. */
static size_t queued_on(const park_rwlock_t *rw)
{
    return park__wait_count(rw);
}

/* ---- actors: threads that take a hold, keep it until told, release it ---- */

enum take {
    TAKE_READ,
    TAKE_READ_UNTIL,
    TAKE_WRITE,
    TAKE_WRITE_UNTIL,
};

struct actor {
    park_rwlock_t *rw;
    enum take take;
    park_time_t deadline; /* the _UNTIL kinds */
    atomic_int *entries;  /* optional: numbers the entries of all actors */
    int result;           /* 0 or the error of the _UNTIL kinds */
    int entry;            /* 1-based place among the entries, if counted */
    park_time_t returned_at;
    atomic_bool holding; /* took the lock and has not yet released it */
    atomic_bool release; /* set by the test: release it now */
    atomic_bool done;    /* returned (with or without the lock) */
};

static bool is_read(enum take t)
{
    return t == TAKE_READ || t == TAKE_READ_UNTIL;
}

static void *actor_main(void *arg)
{
    struct actor *a = arg;
    switch (a->take) {
    case TAKE_READ:
        park_rwlock_read_lock(a->rw);
        a->result = 0;
        break;
    case TAKE_READ_UNTIL:
        a->result = park_rwlock_read_lock_until(a->rw, a->deadline);
        break;
    case TAKE_WRITE:
        park_rwlock_write_lock(a->rw);
        a->result = 0;
        break;
    case TAKE_WRITE_UNTIL:
        a->result = park_rwlock_write_lock_until(a->rw, a->deadline);
        break;
    }
    a->returned_at = park_now();
    if (a->result == 0) {
        if (a->entries)
            a->entry = atomic_fetch_add(a->entries, 1) + 1;
        atomic_store(&a->holding, true);
        AWAIT(atomic_load(&a->release));
        atomic_store(&a->holding, false);
        if (is_read(a->take))
            park_rwlock_read_unlock(a->rw);
        else
            park_rwlock_write_unlock(a->rw);
    }
    atomic_store(&a->done, true);
    return NULL;
}

/* Starts an actor; deadline is for the _UNTIL kinds, entries may be NULL. */
static test_threads_t *start_actor_with(struct actor *a, park_rwlock_t *rw, enum take take,
                                        park_time_t deadline, atomic_int *entries)
{
    *a = (struct actor){.rw = rw, .take = take, .deadline = deadline, .entries = entries};
    return test_threads_start(1, actor_main, a, sizeof *a);
}

static test_threads_t *start_actor(struct actor *a, park_rwlock_t *rw, enum take take)
{
    return start_actor_with(a, rw, take, PARK_FOREVER, NULL);
}

/* Starts an actor and waits until it is queued (queued_on grows by one). */
static test_threads_t *queue_actor_with(struct actor *a, park_rwlock_t *rw, enum take take,
                                        atomic_int *entries)
{
    size_t before = queued_on(rw);
    test_threads_t *t = start_actor_with(a, rw, take, PARK_FOREVER, entries);
    AWAIT(queued_on(rw) == before + 1);
    ASSERT_FALSE(atomic_load(&a->holding));
    return t;
}

static test_threads_t *queue_actor(struct actor *a, park_rwlock_t *rw, enum take take)
{
    return queue_actor_with(a, rw, take, NULL);
}

/* Tells the actor to release its hold and waits until it has returned. */
static void finish_actor(struct actor *a, test_threads_t *t)
{
    atomic_store(&a->release, true);
    test_threads_join(t);
}

/* ---- layout and initialisation ---------------------------------------- */

TEST(rwlock_size_is_at_most_32_bytes)
{
    ASSERT_LE(sizeof(park_rwlock_t), 32);
}

/* Takes and releases every kind of hold on a lock that must be free. */
static void assert_free(park_rwlock_t *rw)
{
    ASSERT_EQ(park_rwlock_destroy(rw), 0);
    ASSERT_TRUE(park_rwlock_try_write_lock(rw));
    park_rwlock_write_unlock(rw);
    park_rwlock_read_lock(rw);
    ASSERT_TRUE(park_rwlock_try_read_lock(rw));
    park_rwlock_read_unlock(rw);
    park_rwlock_read_unlock(rw);
    park_rwlock_write_lock(rw);
    park_rwlock_write_unlock(rw);
    ASSERT_EQ(park_rwlock_destroy(rw), 0);
}

TEST(rwlock_static_initializer_is_free)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    assert_free(&rw);
}

TEST(rwlock_zeroed_memory_is_free)
{
    park_rwlock_t rw;
    memset(&rw, 0, sizeof rw);
    assert_free(&rw);
    park_rwlock_t *heap = calloc(1, sizeof *heap);
    ASSERT_TRUE(heap != NULL);
    assert_free(heap);
    free(heap);
}

TEST(rwlock_init_makes_any_memory_a_free_lock)
{
    park_rwlock_t rw;
    memset(&rw, 0xa5, sizeof rw);
    park_rwlock_init(&rw);
    assert_free(&rw);
    /* Also a lock left held. */
    park_rwlock_write_lock(&rw);
    park_rwlock_init(&rw);
    assert_free(&rw);
}

/* ---- try-operations ------------------------------------------------------ */

TEST(rwlock_try_read_lock_takes_a_free_lock_and_readers_share_it)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_lock(&rw);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    park_rwlock_read_unlock(&rw);
    ASSERT_TRUE(park_rwlock_try_write_lock(&rw));
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_try_write_lock_takes_a_free_lock_and_excludes_everyone)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    ASSERT_TRUE(park_rwlock_try_write_lock(&rw));
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, 0), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, 0), ETIMEDOUT);
    park_rwlock_write_unlock(&rw);
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- timed operations ---------------------------------------------------- */

TEST(rwlock_lock_until_past_deadline_takes_a_lock_it_may_enter)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, 0), 0);
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, park_now()), 0); /* read-held: shared */
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, 0), 0);
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, PARK_FOREVER), 0);
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, PARK_FOREVER), 0);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_lock_until_past_deadline_on_an_excluding_hold_times_out_at_once)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_time_t start = park_now();
    park_rwlock_write_lock(&rw);
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, 0), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, start), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, start), ETIMEDOUT);
    park_rwlock_write_unlock(&rw);
    park_rwlock_read_lock(&rw);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, 0), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, start), ETIMEDOUT);
    park_rwlock_read_unlock(&rw);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_EQ(queued_on(&rw), 0);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_lock_until_near_deadline_times_out_not_before_it)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    static const uint64_t ahead_ns[] = {1000, 50000, 500000, MS, 2 * MS, 5 * MS, 10 * MS};
    for (size_t i = 0; i < sizeof ahead_ns / sizeof ahead_ns[0]; i++) {
        /* A writer against a reader, then a reader and a writer against a
         * writer. */
        for (int round = 0; round < 3; round++) {
            if (round == 0)
                park_rwlock_read_lock(&rw);
            else
                park_rwlock_write_lock(&rw);
            park_time_t deadline = park_deadline_in(ahead_ns[i]);
            int rc = round == 1 ? park_rwlock_read_lock_until(&rw, deadline)
                                : park_rwlock_write_lock_until(&rw, deadline);
            park_time_t now = park_now();
            ASSERT_EQ(rc, ETIMEDOUT);
            ASSERT_GE(now, deadline);
            ASSERT_LT(now - deadline, LATE_NS);
            ASSERT_EQ(queued_on(&rw), 0);
            if (round == 0) {
                /* The writer left no "writer waiting" behind. */
                ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
                park_rwlock_read_unlock(&rw);
                park_rwlock_read_unlock(&rw);
            } else {
                park_rwlock_write_unlock(&rw);
            }
        }
    }
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_lock_until_takes_the_lock_released_before_the_deadline)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    for (int writer = 0; writer < 2; writer++) {
        park_rwlock_write_lock(&rw);
        struct actor a;
        test_threads_t *t = start_actor_with(&a, &rw, writer ? TAKE_WRITE_UNTIL : TAKE_READ_UNTIL,
                                             park_deadline_in(HANG_NS), NULL);
        AWAIT(queued_on(&rw) == 1);
        park_rwlock_write_unlock(&rw);
        AWAIT(atomic_load(&a.holding));
        ASSERT_EQ(a.result, 0);
        finish_actor(&a, t);
    }
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* Under fault injection the futex reports early timeouts: a wait without a
 * deadline must absorb them. */
TEST(rwlock_lock_until_forever_waits_for_the_release)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    for (int writer = 0; writer < 2; writer++) {
        park_rwlock_write_lock(&rw);
        struct actor a;
        test_threads_t *t = queue_actor(&a, &rw, writer ? TAKE_WRITE_UNTIL : TAKE_READ_UNTIL);
        test_sleep_ns(20 * MS); /* let faults hit the sleeping waiter */
        ASSERT_FALSE(atomic_load(&a.done));
        park_rwlock_write_unlock(&rw);
        AWAIT(atomic_load(&a.holding));
        ASSERT_EQ(a.result, 0);
        finish_actor(&a, t);
    }
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- destroy ------------------------------------------------------------- */

TEST(rwlock_destroy_of_a_free_lock_returns_zero)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
    park_rwlock_read_lock(&rw);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_rwlock_destroy(NULL), 0);
}

TEST(rwlock_destroy_of_a_held_lock_is_ebusy_and_keeps_it_usable)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    park_rwlock_t before = rw;
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY);
    ASSERT_EQ(memcmp(&rw, &before, sizeof rw), 0);
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);

    park_rwlock_write_lock(&rw);
    before = rw;
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY);
    ASSERT_EQ(memcmp(&rw, &before, sizeof rw), 0);
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    struct actor w;
    test_threads_t *t = queue_actor(&w, &rw, TAKE_WRITE);
    park_rwlock_read_unlock(&rw); /* now only the writer holds, none waits */
    AWAIT(atomic_load(&w.holding));
    struct actor r;
    test_threads_t *tr = queue_actor(&r, &rw, TAKE_READ);
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY);
    finish_actor(&w, t);
    AWAIT(atomic_load(&r.holding));
    finish_actor(&r, tr);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- not thread-affine ---------------------------------------------------- */

static void *read_unlocker(void *arg)
{
    park_rwlock_read_unlock(arg);
    return NULL;
}

static void *write_unlocker(void *arg)
{
    park_rwlock_write_unlock(arg);
    return NULL;
}

TEST(rwlock_holds_may_be_released_by_another_thread)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    test_threads_join(test_threads_start(1, read_unlocker, &rw, 0));
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
    park_rwlock_write_lock(&rw);
    test_threads_join(test_threads_start(1, write_unlocker, &rw, 0));
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);

    /* Also when the release hands the lock to a waiter. */
    park_rwlock_read_lock(&rw);
    struct actor w;
    test_threads_t *t = queue_actor(&w, &rw, TAKE_WRITE);
    test_threads_join(test_threads_start(1, read_unlocker, &rw, 0));
    AWAIT(atomic_load(&w.holding));
    finish_actor(&w, t);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* A thread's read_lock after its hold was released by another thread is no
 * re-entry, also while a writer waits and others read: it waits its turn
 * (PARK_DEBUG builds must not report it). */
struct release_when_queued {
    park_rwlock_t *rw;
    size_t queued;
    atomic_bool *release;
};

static void *release_when_queued_main(void *arg)
{
    struct release_when_queued *r = arg;
    AWAIT(queued_on(r->rw) == r->queued);
    atomic_store(r->release, true);
    return NULL;
}

TEST(rwlock_read_lock_after_a_hold_released_elsewhere_waits_its_turn)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    atomic_int entries = 0;
    park_rwlock_read_lock(&rw);
    test_threads_join(test_threads_start(1, read_unlocker, &rw, 0));
    struct actor r, w;
    test_threads_t *tr = start_actor(&r, &rw, TAKE_READ);
    AWAIT(atomic_load(&r.holding));
    test_threads_t *tw = queue_actor_with(&w, &rw, TAKE_WRITE, &entries);
    atomic_store(&w.release, true); /* w leaves as soon as it is in */
    /* Once this thread is queued behind w, r leaves: w goes, then us. */
    struct release_when_queued rq = {&rw, 2, &r.release};
    test_threads_t *helper = test_threads_start(1, release_when_queued_main, &rq, sizeof rq);
    park_rwlock_read_lock(&rw);
    ASSERT_EQ(atomic_fetch_add(&entries, 1), 1); /* w was in before us */
    park_rwlock_read_unlock(&rw);
    test_threads_join(helper);
    test_threads_join(tr);
    test_threads_join(tw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- sharing and exclusion ---------------------------------------------- */

/* Two readers hold the lock at once: each takes it and keeps it until told
 * to release, and both get in before either is told. */
TEST(rwlock_readers_overlap_when_no_writer_waits)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    struct actor a, b;
    test_threads_t *ta = start_actor(&a, &rw, TAKE_READ);
    test_threads_t *tb = start_actor(&b, &rw, TAKE_READ);
    AWAIT(atomic_load(&a.holding) && atomic_load(&b.holding));
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_unlock(&rw);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    finish_actor(&a, ta);
    finish_actor(&b, tb);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_writer_waits_for_every_reader)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    park_rwlock_read_lock(&rw);
    struct actor w;
    test_threads_t *t = queue_actor(&w, &rw, TAKE_WRITE);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(queued_on(&rw), 1);
    ASSERT_FALSE(atomic_load(&w.holding));
    park_rwlock_read_unlock(&rw);
    AWAIT(atomic_load(&w.holding));
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    finish_actor(&w, t);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_writer_waits_for_the_writer)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_write_lock(&rw);
    struct actor w;
    test_threads_t *t = queue_actor(&w, &rw, TAKE_WRITE);
    park_rwlock_write_unlock(&rw);
    /* The woken writer's turn: neither a try-read nor a try-write gets in
     * before it. */
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    AWAIT(atomic_load(&w.holding));
    finish_actor(&w, t);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- writer preference --------------------------------------------------- */

TEST(rwlock_waiting_writer_blocks_new_readers)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    struct actor w, r;
    test_threads_t *tw = queue_actor(&w, &rw, TAKE_WRITE);
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, 0), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, park_deadline_in(2 * MS)), ETIMEDOUT);
    test_threads_t *tr = queue_actor(&r, &rw, TAKE_READ);
    park_rwlock_read_unlock(&rw);
    /* The writer goes first; the reader behind it still waits. */
    AWAIT(atomic_load(&w.holding));
    ASSERT_EQ(queued_on(&rw), 1);
    ASSERT_FALSE(atomic_load(&r.holding));
    finish_actor(&w, tw);
    AWAIT(atomic_load(&r.holding));
    finish_actor(&r, tr);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* The reader queued first (behind a writer's hold), the writer after it:
 * when the lock falls free the writer still goes first. */
TEST(rwlock_queued_writer_goes_before_older_queued_readers)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    atomic_int entries = 0;
    park_rwlock_write_lock(&rw);
    struct actor r, w;
    test_threads_t *tr = queue_actor_with(&r, &rw, TAKE_READ, &entries);
    test_threads_t *tw = queue_actor_with(&w, &rw, TAKE_WRITE, &entries);
    park_rwlock_write_unlock(&rw);
    AWAIT(atomic_load(&w.holding));
    ASSERT_EQ(queued_on(&rw), 1);
    ASSERT_FALSE(atomic_load(&r.holding));
    finish_actor(&w, tw);
    AWAIT(atomic_load(&r.holding));
    finish_actor(&r, tr);
    ASSERT_EQ(w.entry, 1);
    ASSERT_EQ(r.entry, 2);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- batches ------------------------------------------------------------- */

/* Each reader holds until all are inside, so they must all enter with the
 * one release. */
TEST(rwlock_queued_readers_enter_together_when_the_writer_releases)
{
    enum { N = 5 };
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_write_lock(&rw);
    struct actor r[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++)
        t[i] = queue_actor(&r[i], &rw, TAKE_READ);
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(queued_on(&rw), 0);
    for (int i = 0; i < N; i++)
        AWAIT(atomic_load(&r[i].holding));
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    for (int i = 0; i < N; i++)
        finish_actor(&r[i], t[i]);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* Queue: W1 R1 R2 W2 W3 behind this thread's write hold. K = 2: W1 and W2
 * go (2 writers in a row while readers wait), then R1 and R2 together,
 * then W3. */
TEST(rwlock_queued_readers_go_after_two_writers_in_a_row)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    ASSERT_EQ(PARK_RWLOCK_WRITER_STREAK, 2);
    park_rwlock_write_lock(&rw);
    struct actor w1, r1, r2, w2, w3;
    test_threads_t *tw1 = queue_actor(&w1, &rw, TAKE_WRITE);
    test_threads_t *tr1 = queue_actor(&r1, &rw, TAKE_READ);
    test_threads_t *tr2 = queue_actor(&r2, &rw, TAKE_READ);
    test_threads_t *tw2 = queue_actor(&w2, &rw, TAKE_WRITE);
    test_threads_t *tw3 = queue_actor(&w3, &rw, TAKE_WRITE);

    park_rwlock_write_unlock(&rw);
    AWAIT(atomic_load(&w1.holding));
    ASSERT_EQ(queued_on(&rw), 4);

    finish_actor(&w1, tw1);
    AWAIT(atomic_load(&w2.holding));
    ASSERT_EQ(queued_on(&rw), 3);
    ASSERT_FALSE(atomic_load(&r1.holding) || atomic_load(&r2.holding));

    finish_actor(&w2, tw2); /* the second writer in a row: readers now */
    AWAIT(atomic_load(&r1.holding) && atomic_load(&r2.holding));
    ASSERT_EQ(queued_on(&rw), 1);
    ASSERT_FALSE(atomic_load(&w3.holding));
    /* W3 still waits, so new readers may not join the batch. */
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));

    finish_actor(&r1, tr1);
    ASSERT_FALSE(atomic_load(&w3.holding));
    finish_actor(&r2, tr2);
    AWAIT(atomic_load(&w3.holding));
    finish_actor(&w3, tw3);
    ASSERT_EQ(queued_on(&rw), 0);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* With no reader waiting, writers simply follow each other. */
TEST(rwlock_queued_writers_follow_each_other_in_arrival_order)
{
    enum { N = 4 };
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    atomic_int entries = 0;
    park_rwlock_write_lock(&rw);
    struct actor w[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++)
        t[i] = queue_actor_with(&w[i], &rw, TAKE_WRITE, &entries);
    park_rwlock_write_unlock(&rw);
    for (int i = 0; i < N; i++) {
        AWAIT(atomic_load(&w[i].holding));
        ASSERT_EQ(w[i].entry, i + 1);
        finish_actor(&w[i], t[i]);
    }
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- time-outs -------------------------------------------------------------- */

/* A timed writer queues behind this thread's read hold, a reader queues
 * behind the writer; the writer gives up, and the reader must get in
 * beside this thread's hold. The writer's deadline must outlast queueing
 * the reader; if this machine was too slow for that, the round is repeated
 * with a longer deadline. */
TEST(rwlock_timed_out_writer_lets_in_the_readers_it_held_back)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    for (uint64_t ns = 50 * MS;; ns *= 2) {
        park_rwlock_read_lock(&rw);
        struct actor w, r;
        test_threads_t *tw =
            start_actor_with(&w, &rw, TAKE_WRITE_UNTIL, park_deadline_in(ns), NULL);
        AWAIT(queued_on(&rw) == 1 || atomic_load(&w.done));
        bool both_queued = false;
        test_threads_t *tr = start_actor(&r, &rw, TAKE_READ);
        AWAIT((both_queued = queued_on(&rw) == 2) || atomic_load(&w.done));
        test_threads_join(tw);
        ASSERT_EQ(w.result, ETIMEDOUT);
        ASSERT_GE(w.returned_at, w.deadline);
        AWAIT(atomic_load(&r.holding)); /* while this thread still reads */
        ASSERT_EQ(queued_on(&rw), 0);
        finish_actor(&r, tr);
        park_rwlock_read_unlock(&rw);
        ASSERT_EQ(park_rwlock_destroy(&rw), 0);
        if (both_queued)
            break;
    }
}

/* Two writers queued; the first gives up: the second still holds the
 * readers back. */
TEST(rwlock_timed_out_writer_keeps_readers_back_while_another_writer_waits)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    for (uint64_t ns = 50 * MS;; ns *= 2) {
        park_rwlock_read_lock(&rw);
        struct actor w1;
        test_threads_t *tw1 =
            start_actor_with(&w1, &rw, TAKE_WRITE_UNTIL, park_deadline_in(ns), NULL);
        AWAIT(queued_on(&rw) == 1 || atomic_load(&w1.done));
        struct actor w2, r;
        test_threads_t *tw2 = start_actor(&w2, &rw, TAKE_WRITE);
        AWAIT(queued_on(&rw) == 2 || atomic_load(&w1.done));
        test_threads_t *tr = start_actor(&r, &rw, TAKE_READ);
        bool all_queued = false;
        AWAIT((all_queued = queued_on(&rw) == 3) || atomic_load(&w1.done));
        test_threads_join(tw1);
        ASSERT_EQ(w1.result, ETIMEDOUT);
        AWAIT(queued_on(&rw) == 2); /* w2 and r */
        ASSERT_FALSE(atomic_load(&r.holding));
        ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
        park_rwlock_read_unlock(&rw);
        AWAIT(atomic_load(&w2.holding));
        ASSERT_FALSE(atomic_load(&r.holding));
        finish_actor(&w2, tw2);
        AWAIT(atomic_load(&r.holding));
        finish_actor(&r, tr);
        ASSERT_EQ(park_rwlock_destroy(&rw), 0);
        if (all_queued)
            break;
    }
}

/* A writer holds; a second writer gives up; the readers queued behind it
 * wait for the holder, and enter at its release. */
TEST(rwlock_timed_out_writer_behind_a_writer_leaves_readers_to_its_release)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    for (uint64_t ns = 50 * MS;; ns *= 2) {
        park_rwlock_write_lock(&rw);
        struct actor w;
        test_threads_t *tw =
            start_actor_with(&w, &rw, TAKE_WRITE_UNTIL, park_deadline_in(ns), NULL);
        AWAIT(queued_on(&rw) == 1 || atomic_load(&w.done));
        struct actor r;
        test_threads_t *tr = start_actor(&r, &rw, TAKE_READ);
        bool both_queued = false;
        AWAIT((both_queued = queued_on(&rw) == 2) || atomic_load(&w.done));
        test_threads_join(tw);
        ASSERT_EQ(w.result, ETIMEDOUT);
        AWAIT(queued_on(&rw) == 1);
        ASSERT_FALSE(atomic_load(&r.holding));
        park_rwlock_write_unlock(&rw);
        AWAIT(atomic_load(&r.holding));
        finish_actor(&r, tr);
        ASSERT_EQ(park_rwlock_destroy(&rw), 0);
        if (both_queued)
            break;
    }
}

TEST(rwlock_timed_out_reader_leaves_the_lock_working)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_write_lock(&rw);
    struct actor r2;
    test_threads_t *t2 = queue_actor(&r2, &rw, TAKE_READ);
    park_time_t deadline = park_deadline_in(10 * MS);
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, deadline), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(queued_on(&rw), 1);
    park_rwlock_write_unlock(&rw);
    AWAIT(atomic_load(&r2.holding));
    finish_actor(&r2, t2);
    ASSERT_EQ(queued_on(&rw), 0);
    assert_free(&rw);
}

/* ---- downgrade ------------------------------------------------------------- */

TEST(rwlock_downgrade_keeps_a_read_hold_that_readers_share)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_write_lock(&rw);
    park_rwlock_downgrade(&rw);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY);
    struct actor r;
    test_threads_t *t = start_actor(&r, &rw, TAKE_READ);
    AWAIT(atomic_load(&r.holding));
    finish_actor(&r, t);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

TEST(rwlock_downgrade_admits_queued_readers_when_no_writer_waits)
{
    enum { N = 3 };
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_write_lock(&rw);
    struct actor r[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++)
        t[i] = queue_actor(&r[i], &rw, TAKE_READ);
    park_rwlock_downgrade(&rw);
    ASSERT_EQ(queued_on(&rw), 0);
    for (int i = 0; i < N; i++)
        AWAIT(atomic_load(&r[i].holding));
    for (int i = 0; i < N; i++)
        finish_actor(&r[i], t[i]);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw)); /* still ours */
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* Queue: W then R behind this thread's write hold. After the downgrade W
 * keeps its place and does not get in, and R stays queued behind it. */
TEST(rwlock_downgrade_lets_no_writer_in_and_keeps_readers_behind_a_waiting_one)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_write_lock(&rw);
    struct actor w, r;
    test_threads_t *tw = queue_actor(&w, &rw, TAKE_WRITE);
    test_threads_t *tr = queue_actor(&r, &rw, TAKE_READ);
    park_rwlock_downgrade(&rw);
    ASSERT_EQ(queued_on(&rw), 2);
    ASSERT_FALSE(atomic_load(&w.holding) || atomic_load(&r.holding));
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw)); /* a writer waits */
    park_rwlock_read_unlock(&rw);
    AWAIT(atomic_load(&w.holding));
    ASSERT_EQ(queued_on(&rw), 1);
    ASSERT_FALSE(atomic_load(&r.holding));
    finish_actor(&w, tw);
    AWAIT(atomic_load(&r.holding));
    finish_actor(&r, tr);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* A small oracle: one writer or many readers. */
struct excl {
    park_rwlock_t rw;
    atomic_int readers;
    atomic_int writers;
    atomic_int overlaps; /* times a reader saw another reader inside */
    long data;
};

static void *excl_main(void *arg)
{
    struct excl *e = arg;
    for (int i = 0; i < 2000; i++) {
        if (i % 4 == 0) {
            park_rwlock_write_lock(&e->rw);
            if (atomic_fetch_add(&e->writers, 1) != 0 || atomic_load(&e->readers) != 0)
                test_fail(__FILE__, __LINE__, "a writer is not alone");
            for (int k = 0; k < 10; k++)
                e->data++;
            atomic_fetch_sub(&e->writers, 1);
            park_rwlock_write_unlock(&e->rw);
        } else {
            park_rwlock_read_lock(&e->rw);
            if (atomic_fetch_add(&e->readers, 1) != 0)
                atomic_fetch_add(&e->overlaps, 1);
            if (atomic_load(&e->writers) != 0 || e->data % 10 != 0)
                test_fail(__FILE__, __LINE__, "a reader sees a writer");
            atomic_fetch_sub(&e->readers, 1);
            park_rwlock_read_unlock(&e->rw);
        }
    }
    return NULL;
}

TEST(rwlock_admits_one_writer_or_many_readers)
{
    enum { THREADS = 4 };
    struct excl e = {PARK_RWLOCK_INIT, 0, 0, 0, 0};
    test_threads_join(test_threads_start(THREADS, excl_main, &e, 0));
    ASSERT_EQ(e.data, THREADS * 500 * 10);
    ASSERT_EQ(park_rwlock_destroy(&e.rw), 0);
}

/* ---- PARK_DEBUG: misuse aborts with a message -------------------------------- */

#ifdef PARK_DEBUG
/* Run alone in a new process (a forked copy would not do: the queued
 * writer does not exist in a child of fork, so no writer waits there). This
 * thread holds a read and a writer waits; it locks again. */
TEST(child_rwlock_read_lock_reentered_while_a_writer_waits)
{
    static park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    struct actor w;
    (void)queue_actor(&w, &rw, TAKE_WRITE);
    park_rwlock_read_lock(&rw);
}

TEST(rwlock_read_lock_reentered_while_a_writer_waits_aborts_with_a_message)
{
    test_expect_abort_in_child("child_rwlock_read_lock_reentered_while_a_writer_waits",
                               "park_rwlock_read_lock");
    test_expect_abort_in_child("child_rwlock_read_lock_reentered_while_a_writer_waits", "deadlock");
}

/* Re-entry with nobody waiting is no deadlock and is not reported. */
TEST(rwlock_read_lock_reentered_with_no_writer_waiting_is_allowed)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    park_rwlock_read_lock(&rw);
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

#endif

static park_rwlock_t never_locked = PARK_RWLOCK_INIT;

static void read_unlock_never_locked(void *arg)
{
    (void)arg;
    park_rwlock_read_unlock(&never_locked);
}

static void write_unlock_never_locked(void *arg)
{
    (void)arg;
    park_rwlock_write_unlock(&never_locked);
}

static void downgrade_never_locked(void *arg)
{
    (void)arg;
    park_rwlock_downgrade(&never_locked);
}

static void read_unlock_write_held(void *arg)
{
    park_rwlock_t *rw = arg;
    park_rwlock_write_lock(rw);
    park_rwlock_read_unlock(rw);
}

static void write_unlock_read_held(void *arg)
{
    park_rwlock_t *rw = arg;
    park_rwlock_read_lock(rw);
    park_rwlock_write_unlock(rw);
}

/* Impossible releases abort in every build (the inline read unlock tests
 * the count its fetch_sub returns; the others fail their CAS and check in
 * the slow path), instead of corrupting the word. */
TEST(rwlock_release_of_a_hold_not_held_aborts_with_a_message)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    test_expect_abort(read_unlock_never_locked, NULL, "park_rwlock_read_unlock");
    test_expect_abort(write_unlock_never_locked, NULL, "park_rwlock_write_unlock");
    test_expect_abort(downgrade_never_locked, NULL, "park_rwlock_downgrade");
    test_expect_abort(write_unlock_read_held, &rw, "park_rwlock_write_unlock");
    test_expect_abort(read_unlock_write_held, &rw, "park_rwlock_read_unlock");
    test_expect_abort(read_unlock_write_held, &rw, "not read-locked");
    ASSERT_EQ(park_rwlock_destroy(&rw), 0); /* the children's misuse left ours alone */
}

#ifndef PARK_TEST_READ_MOSTLY
/* The plain mode's inline read release tests its rare cases with one mask
 * on the word it released minus one (park/rwlock.h): a word above the
 * readers' guard, or draining with other readers left, takes that branch
 * and must still release exactly one hold and hand nothing over. The words
 * are forged (no 2^27 real holds, no queued writer); the lock is unused
 * meanwhile. Not in the read-mostly build, whose biased locks keep their
 * holds elsewhere. */
TEST(rwlock_read_release_in_the_rare_branch_releases_one_hold_and_nothing_more)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    const uint32_t guard = PARK__RW_READERS_GUARD;
    __atomic_store_n(&rw.state_, guard + 2 * PARK__RW_READER, __ATOMIC_RELAXED);
    park_rwlock_read_unlock(&rw); /* s - 1 above the guard: the rare branch */
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), guard + PARK__RW_READER);
    park_rwlock_read_unlock(&rw); /* s - 1 = the guard: the rare branch */
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), guard);
    park_rwlock_read_unlock(&rw); /* s - 1 below the guard: the common test */
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), guard - PARK__RW_READER);
    /* Draining, with another reader left: not the last out. */
    const uint32_t drain = PARK__RW_DRAIN | PARK__RW_WRITER_WAITING;
    __atomic_store_n(&rw.state_, drain | 2 * PARK__RW_READER, __ATOMIC_RELAXED);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), drain | PARK__RW_READER);
    /* The one hold of an otherwise empty word: the early return. */
    __atomic_store_n(&rw.state_, PARK__RW_READER, __ATOMIC_RELAXED);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), 0u);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}
#endif

/* ---- the read-mostly mode -------------------------------------------------- */

static bool biased(const park_rwlock_t *rw)
{
    return __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) & PARK__RW_BIASED;
}

/* Two read holds that meet on the word (the second finds the first there,
 * as contending readers do), then released: true if the lock is biased
 * after. Unbiased, such readers bias it again once its inhibition is
 * over. */
static bool meeting_reads_then_biased(park_rwlock_t *rw)
{
    park_rwlock_read_lock(rw);
    park_rwlock_read_lock(rw);
    park_rwlock_read_unlock(rw);
    park_rwlock_read_unlock(rw);
    return biased(rw);
}

/* The word of a biased lock holds only the bias hold: readers use the table. */
TEST(rwlock_read_mostly_readers_of_a_biased_lock_leave_its_word_alone)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY, by_init;
    park_rwlock_init_read_mostly(&by_init);
    ASSERT_EQ(memcmp(&rw, &by_init, sizeof rw), 0);
    ASSERT_TRUE(biased(&rw));
    park_rwlock_read_lock(&rw);
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, park_deadline_in(MS)), 0);
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), PARK__RW_READER);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw)); /* revoked: three holds in the word */
    ASSERT_FALSE(biased(&rw));
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED) & PARK__RW_READERS_MASK, 3);
    for (int i = 0; i < 3; i++)
        park_rwlock_read_unlock(&rw);
    ASSERT_TRUE(park_rwlock_try_write_lock(&rw));
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* A writer revokes the bias (the reader's table hold moves into the word,
 * and the writer waits for it); readers bias the lock again later. */
TEST(rwlock_read_mostly_writer_revokes_and_readers_bias_it_again)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY;
    struct actor r, w;
    test_threads_t *tr = start_actor(&r, &rw, TAKE_READ);
    AWAIT(atomic_load(&r.holding));
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), PARK__RW_READER);
    test_threads_t *tw = queue_actor(&w, &rw, TAKE_WRITE);
    ASSERT_FALSE(biased(&rw));
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw)); /* a writer waits: no reader enters */
    finish_actor(&r, tr);
    AWAIT(atomic_load(&w.holding));
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    finish_actor(&w, tw);
    /* Readers from the word, then (the inhibition over) the bias again. */
    AWAIT(meeting_reads_then_biased(&rw));
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), PARK__RW_READER);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* A lone reader of an unbiased lock never biases it again, even long
 * after the inhibition: its holds stay in the word (in the plain mode's
 * inline paths, except in PARK_DEBUG builds), where they cost less than
 * the table's. Readers that meet on the word bias it. */
TEST(rwlock_read_mostly_lone_reader_leaves_the_lock_unbiased)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY;
    park_rwlock_write_lock(&rw); /* revokes the bias of init */
    park_rwlock_write_unlock(&rw);
    ASSERT_FALSE(biased(&rw));
    test_sleep_ns(20 * MS); /* past the longest inhibition (about 17 ms) */
    for (int i = 0; i < 1000; i++) {
        park_rwlock_read_lock(&rw);
        ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), PARK__RW_READER);
        park_rwlock_read_unlock(&rw);
        ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
        park_rwlock_read_unlock(&rw);
        ASSERT_EQ(park_rwlock_read_lock_until(&rw, park_deadline_in(MS)), 0);
        park_rwlock_read_unlock(&rw);
    }
    ASSERT_FALSE(biased(&rw));
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), 0u);
    AWAIT(meeting_reads_then_biased(&rw));
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), PARK__RW_READER); /* the bias */
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* Revokes the bias of rw as soon as readers have put it back (a lock
 * written every few microseconds): the inhibition that follows is at
 * least 50 us doubled `level` times, counted from before the revocation. */
static unsigned revoke_soon_after_the_bias(park_rwlock_t *rw)
{
    /* Meeting reads back to back (readers look at the clock every 32),
     * until the inhibition is over and they re-bias; no sleeping in
     * between, or the bias would live long. */
    for (long pairs = 0; !meeting_reads_then_biased(rw); pairs++)
        ASSERT_TRUE(pairs < 1000L * 1000 * 1000);
    park_time_t before = park_now();
    park_rwlock_write_lock(rw);
    park_rwlock_write_unlock(rw);
    unsigned level = park__rwlock_inhibit_level(rw);
    /* The flags keep when the inhibition ends in bits 4-31, in units of
     * 1024 ns (the clock's bits 10-37). */
    uint32_t until = __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) >> 4;
    uint32_t ahead = (until - (uint32_t)(before >> 10)) & ((1u << 28) - 1);
    ASSERT_TRUE(ahead < 1u << 20); /* ahead, not behind */
    ASSERT_TRUE((uint64_t)ahead << 10 >= (50000u << level) - 1024u);
    return level;
}

/* Revocations that each come soon after the readers re-biased the lock
 * double the inhibition, one level a time; a bias that lived long resets
 * it. (A test thread preempted between the re-bias and the write resets it
 * too: the sequence starts again, a bounded number of times.) */
TEST(rwlock_read_mostly_revocations_soon_after_each_bias_lengthen_the_inhibition)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY;
    park_rwlock_write_lock(&rw); /* revokes the bias of init: it lived long */
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park__rwlock_inhibit_level(&rw), 0);
    unsigned level = 0;
    for (int tries = 0; level < 3 && tries < 50; tries++) {
        unsigned next = revoke_soon_after_the_bias(&rw);
        ASSERT_TRUE(next == level + 1 || next == 0);
        level = next;
    }
    ASSERT_EQ(level, 3);
    /* A bias that outlives four of the longest inhibitions: back to 0. */
    AWAIT(meeting_reads_then_biased(&rw));
    test_sleep_ns(4 * 17 * MS);
    park_rwlock_write_lock(&rw);
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park__rwlock_inhibit_level(&rw), 0);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

static void *release_a_read(void *arg)
{
    park_rwlock_read_unlock(arg);
    return NULL;
}

/* A table hold released by another thread: found by its search, so the
 * lock is free after it (no hold lost or left behind). */
TEST(rwlock_read_mostly_table_hold_released_by_another_thread_frees_the_lock)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY;
    park_rwlock_read_lock(&rw);
    park_rwlock_read_lock(&rw);
    test_threads_join(test_threads_start(1, release_a_read, &rw, 0));
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY); /* one hold left, ours */
    test_threads_join(test_threads_start(1, release_a_read, &rw, 0));
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
    ASSERT_TRUE(park_rwlock_try_write_lock(&rw));
    ASSERT_FALSE(biased(&rw));
    ASSERT_EQ(__atomic_load_n(&rw.state_, __ATOMIC_RELAXED), PARK__RW_WRITER);
    park_rwlock_write_unlock(&rw);
    /* Releasing more holds than were taken is still caught. */
    park_rwlock_t fresh = PARK_RWLOCK_INIT_READ_MOSTLY;
    park_rwlock_read_lock(&fresh);
    park_rwlock_read_unlock(&fresh);
    ASSERT_EQ(park_rwlock_destroy(&fresh), 0);
}

static void read_unlock_fresh_read_mostly(void *arg)
{
    (void)arg;
    static park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY;
    park_rwlock_read_unlock(&rw); /* only the bias holds it */
}

TEST(rwlock_read_mostly_release_of_a_hold_not_held_aborts_with_a_message)
{
    test_expect_abort(read_unlock_fresh_read_mostly, NULL, "not read-locked");
}

/* destroy of a biased lock changes nothing and sees every table hold. */
TEST(rwlock_read_mostly_destroy_is_ebusy_while_a_table_hold_exists)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY;
    park_rwlock_read_lock(&rw);
    park_rwlock_t before = rw;
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY);
    ASSERT_EQ(memcmp(&rw, &before, sizeof rw), 0);
    ASSERT_TRUE(biased(&rw));
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

static void *write_lock_until_main(void *arg)
{
    park_rwlock_t *rw = arg;
    int r = park_rwlock_write_lock_until(rw, park_deadline_in(20 * MS));
    return (void *)(intptr_t)r;
}

/* A timed writer that gives up leaves the lock usable by readers (and,
 * later, biased again). */
TEST(rwlock_read_mostly_timed_out_writer_leaves_readers_in)
{
    park_rwlock_t rw = PARK_RWLOCK_INIT_READ_MOSTLY;
    park_rwlock_read_lock(&rw);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, write_lock_until_main, &rw), 0);
    void *r;
    ASSERT_EQ(pthread_join(t, &r), 0);
    ASSERT_EQ((int)(intptr_t)r, ETIMEDOUT);
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);
    ASSERT_TRUE(park_rwlock_try_write_lock(&rw));
    park_rwlock_write_unlock(&rw);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(rwlock_size_is_at_most_32_bytes),
    TEST_ENTRY(rwlock_read_mostly_readers_of_a_biased_lock_leave_its_word_alone),
    TEST_ENTRY(rwlock_read_mostly_writer_revokes_and_readers_bias_it_again),
    TEST_ENTRY(rwlock_read_mostly_lone_reader_leaves_the_lock_unbiased),
    TEST_ENTRY(rwlock_read_mostly_revocations_soon_after_each_bias_lengthen_the_inhibition),
    TEST_ENTRY(rwlock_read_mostly_table_hold_released_by_another_thread_frees_the_lock),
    TEST_ENTRY(rwlock_read_mostly_release_of_a_hold_not_held_aborts_with_a_message),
    TEST_ENTRY(rwlock_read_mostly_destroy_is_ebusy_while_a_table_hold_exists),
    TEST_ENTRY(rwlock_read_mostly_timed_out_writer_leaves_readers_in),
    TEST_ENTRY(rwlock_static_initializer_is_free),
    TEST_ENTRY(rwlock_zeroed_memory_is_free),
    TEST_ENTRY(rwlock_init_makes_any_memory_a_free_lock),
    TEST_ENTRY(rwlock_try_read_lock_takes_a_free_lock_and_readers_share_it),
    TEST_ENTRY(rwlock_try_write_lock_takes_a_free_lock_and_excludes_everyone),
    TEST_ENTRY(rwlock_lock_until_past_deadline_takes_a_lock_it_may_enter),
    TEST_ENTRY(rwlock_lock_until_past_deadline_on_an_excluding_hold_times_out_at_once),
    TEST_ENTRY(rwlock_lock_until_near_deadline_times_out_not_before_it),
    TEST_ENTRY(rwlock_lock_until_takes_the_lock_released_before_the_deadline),
    TEST_ENTRY(rwlock_lock_until_forever_waits_for_the_release),
    TEST_ENTRY(rwlock_destroy_of_a_free_lock_returns_zero),
    TEST_ENTRY(rwlock_destroy_of_null_returns_zero),
    TEST_ENTRY(rwlock_destroy_of_a_held_lock_is_ebusy_and_keeps_it_usable),
    TEST_ENTRY(rwlock_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable),
    TEST_ENTRY(rwlock_holds_may_be_released_by_another_thread),
    TEST_ENTRY(rwlock_read_lock_after_a_hold_released_elsewhere_waits_its_turn),
    TEST_ENTRY(rwlock_readers_overlap_when_no_writer_waits),
    TEST_ENTRY(rwlock_writer_waits_for_every_reader),
    TEST_ENTRY(rwlock_writer_waits_for_the_writer),
    TEST_ENTRY(rwlock_waiting_writer_blocks_new_readers),
    TEST_ENTRY(rwlock_queued_writer_goes_before_older_queued_readers),
    TEST_ENTRY(rwlock_queued_readers_enter_together_when_the_writer_releases),
    TEST_ENTRY(rwlock_queued_readers_go_after_two_writers_in_a_row),
    TEST_ENTRY(rwlock_queued_writers_follow_each_other_in_arrival_order),
    TEST_ENTRY(rwlock_timed_out_writer_lets_in_the_readers_it_held_back),
    TEST_ENTRY(rwlock_timed_out_writer_keeps_readers_back_while_another_writer_waits),
    TEST_ENTRY(rwlock_timed_out_writer_behind_a_writer_leaves_readers_to_its_release),
    TEST_ENTRY(rwlock_timed_out_reader_leaves_the_lock_working),
    TEST_ENTRY(rwlock_downgrade_keeps_a_read_hold_that_readers_share),
    TEST_ENTRY(rwlock_downgrade_admits_queued_readers_when_no_writer_waits),
    TEST_ENTRY(rwlock_downgrade_lets_no_writer_in_and_keeps_readers_behind_a_waiting_one),
    TEST_ENTRY(rwlock_admits_one_writer_or_many_readers),
#ifdef PARK_DEBUG
    TEST_ENTRY(child_rwlock_read_lock_reentered_while_a_writer_waits),
    TEST_ENTRY(rwlock_read_lock_reentered_while_a_writer_waits_aborts_with_a_message),
    TEST_ENTRY(rwlock_read_lock_reentered_with_no_writer_waiting_is_allowed),
#endif
    TEST_ENTRY(rwlock_release_of_a_hold_not_held_aborts_with_a_message),
#ifndef PARK_TEST_READ_MOSTLY
    TEST_ENTRY(rwlock_read_release_in_the_rare_branch_releases_one_hold_and_nothing_more),
#endif
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
