/* tests/unit/mutex_test.c: park_mutex, one behaviour per test.
 *
 * Threads are ordered by handshakes. "Thread T is parked" is observed in the
 * wait queue itself (queued_on counts the waiters of the mutex's key), so no
 * verdict depends on a sleep; the only timing asserted is that a timed lock
 * never gives up before its deadline (and, generously, not seconds after). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <park/park.h>

#include "wait/wait.h"

#include "test.h"

/* A thread that locks m (lock, or lock_until when timed), reports, and if it
 * got the mutex holds it until told to let go. */
struct locker {
    park_mutex_t *m;
    bool timed;
    park_time_t deadline;
    int result;
    park_time_t called_at; /* just before the lock call */
    atomic_bool calling;   /* called_at is set */
    park_time_t returned_at;
    atomic_bool done;
    atomic_bool let_go;
};

static void *locker_main(void *arg)
{
    struct locker *l = arg;
    l->called_at = park_now();
    atomic_store(&l->calling, true);
    if (l->timed) {
        l->result = park_mutex_lock_until(l->m, l->deadline);
    } else {
        park_mutex_lock(l->m);
        l->result = 0;
    }
    l->returned_at = park_now();
    atomic_store(&l->done, true);
    if (l->result == 0) {
        AWAIT(atomic_load(&l->let_go));
        park_mutex_unlock(l->m);
    }
    return NULL;
}

static test_threads_t *start_locker(struct locker *l)
{
    return test_threads_start(1, locker_main, l, sizeof *l);
}

/* Lets a locker that holds the mutex unlock it, and joins it. */
static void finish_locker(struct locker *l, test_threads_t *t)
{
    atomic_store(&l->let_go, true);
    test_threads_join(t);
}

TEST(mutex_size_is_4_to_16_bytes)
{
    ASSERT_GE(sizeof(park_mutex_t), 4);
    ASSERT_LE(sizeof(park_mutex_t), 16);
}

TEST(mutex_static_initializer_is_unlocked)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    ASSERT_TRUE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_zeroed_memory_is_unlocked)
{
    park_mutex_t m;
    memset(&m, 0, sizeof m);
    ASSERT_TRUE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_calloc_memory_is_unlocked)
{
    park_mutex_t *m = calloc(1, sizeof *m);
    ASSERT_TRUE(m != NULL);
    park_mutex_lock(m);
    ASSERT_FALSE(park_mutex_try_lock(m));
    park_mutex_unlock(m);
    ASSERT_EQ(park_mutex_destroy(m), 0);
    free(m);
}

TEST(mutex_init_makes_any_memory_an_unlocked_mutex)
{
    park_mutex_t m;
    memset(&m, 0xa5, sizeof m);
    park_mutex_init(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
    ASSERT_TRUE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);

    park_mutex_lock(&m); /* reuse of memory that held a locked mutex */
    park_mutex_init(&m);
    ASSERT_TRUE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_lock_then_unlock_frees_it)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    ASSERT_FALSE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_TRUE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
}

TEST(mutex_try_lock_takes_a_free_mutex)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    ASSERT_TRUE(park_mutex_try_lock(&m));
    ASSERT_EQ(park_mutex_destroy(&m), EBUSY);
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_try_lock_fails_on_a_held_mutex_and_keeps_it_held)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    park_mutex_t before = m;
    ASSERT_FALSE(park_mutex_try_lock(&m));
    ASSERT_EQ(memcmp(&m, &before, sizeof m), 0);
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_lock_until_past_deadline_takes_a_free_mutex)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    ASSERT_EQ(park_mutex_lock_until(&m, 0), 0);
    ASSERT_FALSE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_lock_until(&m, park_now()), 0);
    ASSERT_FALSE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_lock_until_past_deadline_on_a_held_mutex_times_out_at_once)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    park_time_t start = park_now();
    ASSERT_EQ(park_mutex_lock_until(&m, 0), ETIMEDOUT);
    ASSERT_EQ(park_mutex_lock_until(&m, start), ETIMEDOUT);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_EQ(park__wait_count(&m), 0);
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_lock_until_near_deadline_on_a_held_mutex_times_out_not_before_it)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    /* From just ahead to well ahead, so that neither a check before parking
     * nor the parked wait may give up early. */
    static const uint64_t ahead_ns[] = {1000, 50000, 500000, MS, 2 * MS, 5 * MS, 10 * MS};
    for (size_t i = 0; i < sizeof ahead_ns / sizeof ahead_ns[0]; i++) {
        park_time_t deadline = park_deadline_in(ahead_ns[i]);
        ASSERT_EQ(park_mutex_lock_until(&m, deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now - deadline, LATE_NS);
    }
    /* Still held by us, nobody left queued. */
    ASSERT_FALSE(park_mutex_try_lock(&m));
    ASSERT_EQ(park__wait_count(&m), 0);
    park_mutex_unlock(&m);
    ASSERT_TRUE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_lock_until_takes_the_mutex_when_unlocked_before_the_deadline)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    struct locker l = {.m = &m, .timed = true, .deadline = park_deadline_in(HANG_NS)};
    test_threads_t *t = start_locker(&l);
    AWAIT(park__wait_count(&m) == 1);
    ASSERT_FALSE(atomic_load(&l.done));
    park_mutex_unlock(&m);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(l.result, 0);
    ASSERT_FALSE(park_mutex_try_lock(&m)); /* the locker holds it */
    finish_locker(&l, t);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_lock_until_forever_takes_a_free_mutex)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    ASSERT_EQ(park_mutex_lock_until(&m, PARK_FOREVER), 0);
    ASSERT_FALSE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* Under fault injection the futex reports early timeouts: a wait without a
 * deadline must absorb them. */
TEST(mutex_lock_until_forever_waits_for_unlock)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    struct locker l = {.m = &m, .timed = true, .deadline = PARK_FOREVER};
    test_threads_t *t = start_locker(&l);
    AWAIT(park__wait_count(&m) == 1);
    test_sleep_ns(20 * MS); /* let faults hit the sleeping waiter */
    ASSERT_FALSE(atomic_load(&l.done));
    park_mutex_unlock(&m);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(l.result, 0);
    finish_locker(&l, t);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_destroy_of_a_free_mutex_returns_zero)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    ASSERT_EQ(park_mutex_destroy(&m), 0);
    park_mutex_lock(&m);
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_mutex_destroy(NULL), 0);
}

TEST(mutex_destroy_of_a_held_mutex_is_ebusy_and_keeps_it_usable)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    park_mutex_t before = m;
    ASSERT_EQ(park_mutex_destroy(&m), EBUSY);
    ASSERT_EQ(memcmp(&m, &before, sizeof m), 0);
    ASSERT_FALSE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    park_mutex_lock(&m);
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    struct locker l = {.m = &m};
    test_threads_t *t = start_locker(&l);
    AWAIT(park__wait_count(&m) == 1);
    park_mutex_t before = m;
    ASSERT_EQ(park_mutex_destroy(&m), EBUSY);
    ASSERT_EQ(memcmp(&m, &before, sizeof m), 0);
    ASSERT_EQ(park__wait_count(&m), 1);
    park_mutex_unlock(&m);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(park_mutex_destroy(&m), EBUSY); /* now held by the locker */
    finish_locker(&l, t);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

static void *lock_only(void *arg)
{
    park_mutex_lock(arg);
    return NULL;
}

static void *unlock_only(void *arg)
{
    park_mutex_unlock(arg);
    return NULL;
}

TEST(mutex_may_be_unlocked_by_another_thread)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    test_threads_join(test_threads_start(1, lock_only, &m, 0));
    ASSERT_FALSE(park_mutex_try_lock(&m));
    test_threads_join(test_threads_start(1, unlock_only, &m, 0));
    park_mutex_lock(&m);
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_unlock_by_another_thread_wakes_a_waiter)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    test_threads_join(test_threads_start(1, lock_only, &m, 0));
    struct locker l = {.m = &m};
    test_threads_t *t = start_locker(&l);
    AWAIT(park__wait_count(&m) == 1);
    test_threads_join(test_threads_start(1, unlock_only, &m, 0));
    AWAIT(atomic_load(&l.done));
    ASSERT_FALSE(park_mutex_try_lock(&m));
    finish_locker(&l, t);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_unlock_wakes_a_blocked_waiter)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    struct locker l = {.m = &m};
    test_threads_t *t = start_locker(&l);
    AWAIT(park__wait_count(&m) == 1);
    ASSERT_FALSE(atomic_load(&l.done));
    park_mutex_unlock(&m);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(park__wait_count(&m), 0);
    ASSERT_FALSE(park_mutex_try_lock(&m)); /* the waiter holds it */
    finish_locker(&l, t);
    ASSERT_TRUE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* A locker that finds the mutex held dozes (lib/mutex.c) before it queues:
 * the word stays exactly LOCKED (no credits, no PARKED) for the whole
 * first PARK__FAIR_NS of its wait, so the holder keeps the uncontended
 * paths; it queues only after that, and then gets the mutex at the unlock.
 * The bounds are one-sided: a word read, or a queue seen, before the clock
 * reads `called_at + PARK__FAIR_NS` cannot come from the locker's refill or
 * queueing, which it does only once its own clock, started after
 * called_at, has passed that. Returns how many reads fell inside that
 * window: none when this thread did not run in it (a loaded machine). */
static int doze_round(void)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    struct locker l = {.m = &m};
    test_threads_t *t = start_locker(&l);
    AWAIT(atomic_load(&l.calling));
    int clean_reads = 0;
    for (;;) {
        uint32_t s = __atomic_load_n(&m.state_, __ATOMIC_RELAXED);
        bool queued = park__wait_count(&m) == 1;
        if (park_now() - l.called_at < PARK__FAIR_NS) {
            ASSERT_EQ(s, PARK__MUTEX_LOCKED);
            ASSERT_FALSE(queued);
            clean_reads++;
        }
        if (queued)
            break; /* it queues at last (else the watchdog fails the test) */
    }
    ASSERT_FALSE(atomic_load(&l.done));
    park_mutex_unlock(&m);
    AWAIT(atomic_load(&l.done));
    ASSERT_FALSE(park_mutex_try_lock(&m)); /* the waiter holds it */
    finish_locker(&l, t);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
    return clean_reads;
}

TEST(mutex_locker_dozes_with_the_word_clean_then_queues_and_gets_it)
{
    /* Again until a round has checked something (the watchdog bounds it). */
    while (doze_round() == 0)
        continue;
}

TEST(mutex_locker_is_counted_inside_while_it_waits_and_not_after_taking_it)
{
    /* The count that lets a locker alone at the mutex take the early
     * looks (park__waiting): one while a locker spins, dozes or sleeps
     * queued, none once it has the mutex. */
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    uint32_t base = park__waiting(&m); /* other keys of the bucket: none */
    struct locker l = {.m = &m};
    test_threads_t *t = start_locker(&l);
    AWAIT(park__wait_count(&m) == 1); /* queued at last, asleep */
    ASSERT_EQ(park__waiting(&m), base + 1);
    park_mutex_unlock(&m); /* a hand-off or a woken waiter */
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(l.result, 0);
    ASSERT_EQ(park__waiting(&m), base);
    finish_locker(&l, t);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(mutex_timed_out_locker_is_not_counted_inside)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    uint32_t base = park__waiting(&m);
    struct locker l = {.m = &m, .timed = true, .deadline = park_deadline_in(20000000)};
    test_threads_t *t = start_locker(&l);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(l.result, ETIMEDOUT);
    ASSERT_EQ(park__waiting(&m), base);
    finish_locker(&l, t);
    park_mutex_unlock(&m);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* Lockers that have the mutex and were not yet told to let go. */
static int holders(struct locker *l, int n, int *which)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (atomic_load(&l[i].done) && !atomic_load(&l[i].let_go)) {
            *which = i;
            count++;
        }
    }
    return count;
}

TEST(mutex_each_unlock_lets_one_of_several_waiters_in)
{
    enum { N = 4 };
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    struct locker l[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        l[i] = (struct locker){.m = &m};
        t[i] = start_locker(&l[i]);
        AWAIT(park__wait_count(&m) == (size_t)i + 1);
    }
    park_mutex_unlock(&m);
    for (int round = 0; round < N; round++) {
        int holder = -1;
        AWAIT(holders(l, N, &holder) > 0);
        ASSERT_EQ(holders(l, N, &holder), 1);
        ASSERT_EQ(park__wait_count(&m), (size_t)(N - 1 - round));
        ASSERT_FALSE(park_mutex_try_lock(&m));
        finish_locker(&l[holder], t[holder]);
    }
    ASSERT_EQ(park__wait_count(&m), 0);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* Main holds *m with l queued behind it, and a W set by hand, owned by no
 * thread (as if its waiter sat queued for a busy CPU). */
static test_threads_t *queue_behind_a_stray_woken_mark(park_mutex_t *m, struct locker *l)
{
    park_mutex_lock(m);
    *l = (struct locker){.m = m};
    test_threads_t *t = start_locker(l);
    AWAIT(park__wait_count(m) == 1);
    __atomic_fetch_or(&m->state_, PARK__MUTEX_WOKEN, __ATOMIC_RELAXED);
    return t;
}

/* A woken waiter that does not come (here a W set by hand, owned by no
 * thread, as if its waiter sat queued for a busy CPU) holds back the
 * unlocks' wake-ups only while it is recent or the unlocking thread is
 * bound by the lock: unlocks made at a slow pace wake the queued waiter
 * once the mark is PARK__WOKEN_LATE_NS old (lib/mutex.c, pace_slow). */
TEST(mutex_late_woken_waiter_does_not_hold_back_the_queue)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    struct locker l;
    test_threads_t *t = queue_behind_a_stray_woken_mark(&m, &l);
    /* Unlocks at least 20 us apart (about a hundred take the two slow
     * windows and the mark's age); without the rule, none wakes the
     * waiter until it has waited 1 ms and a hand-off is due (the next
     * test), and without both the loop runs out with main holding it. */
    bool held = true;
    for (int i = 0; i < 2000 && held; i++) {
        park_mutex_unlock(&m);
        test_sleep_ns(20000);
        held = park_mutex_try_lock(&m); /* fails once the waiter has it */
    }
    ASSERT_FALSE(held);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(l.result, 0);
    ASSERT_FALSE(park_mutex_try_lock(&m));
    finish_locker(&l, t);
    ASSERT_EQ(park__wait_count(&m), 0);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* A hand-off comes while a woken waiter is on its way: here W is set by
 * hand and nobody owns it, and main unlocks and relocks back to back, too
 * fast for the late rule's pace test; one unlock in PACE_SAMPLE (32) looks
 * whether a hand-off is due, and the waiter, waiting for 3 ms, is owed
 * one. Without the look no unlock wakes it and main keeps the mutex. */
TEST(mutex_hands_off_to_an_old_waiter_while_a_woken_one_is_on_its_way)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    struct locker l;
    test_threads_t *t = queue_behind_a_stray_woken_mark(&m, &l);
    test_sleep_ns(3 * MS); /* choreography: the waiter is owed a hand-off */
    /* A wait restarts this thread's pace, so that the sleep above (and
     * earlier tests) count as no slow window for the late rule. */
    park_mutex_t other = PARK_MUTEX_INIT;
    park_mutex_lock(&other);
    ASSERT_EQ(park_mutex_lock_until(&other, park_deadline_in(MS / 10)), ETIMEDOUT);
    park_mutex_unlock(&other);
    bool held = true;
    int unlocks = 0;
    while (held && unlocks < 100000) {
        park_mutex_unlock(&m);
        unlocks++;
        held = park_mutex_try_lock(&m); /* fails once the waiter has it */
    }
    ASSERT_FALSE(held);
    ASSERT_LE(unlocks, 64);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(l.result, 0);
    finish_locker(&l, t);
    __atomic_fetch_and(&m.state_, ~PARK__MUTEX_WOKEN, __ATOMIC_RELAXED);
    ASSERT_EQ(park__wait_count(&m), 0);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* The timed waiter queues behind a waiter without deadline and gives up. */
TEST(mutex_lock_until_timing_out_behind_a_waiter_leaves_the_mutex_working)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    struct locker l = {.m = &m};
    test_threads_t *t = start_locker(&l);
    AWAIT(park__wait_count(&m) == 1);
    park_time_t deadline = park_deadline_in(10 * MS);
    ASSERT_EQ(park_mutex_lock_until(&m, deadline), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(park__wait_count(&m), 1);
    ASSERT_FALSE(atomic_load(&l.done));
    park_mutex_unlock(&m);
    AWAIT(atomic_load(&l.done));
    ASSERT_EQ(l.result, 0);
    finish_locker(&l, t);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* The timed waiter queues first and gives up while the other is behind it.
 * Its deadline must outlast queueing the second waiter; if this machine
 * was too slow for that, the round is repeated with a longer deadline. */
TEST(mutex_lock_until_timing_out_ahead_of_a_waiter_leaves_the_mutex_working)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    for (uint64_t ns = 50 * MS;; ns *= 2) {
        struct locker a = {.m = &m, .timed = true, .deadline = park_deadline_in(ns)};
        struct locker b = {.m = &m};
        test_threads_t *ta = start_locker(&a);
        AWAIT(park__wait_count(&m) == 1 || atomic_load(&a.done));
        bool both_queued = false;
        test_threads_t *tb = start_locker(&b);
        AWAIT((both_queued = park__wait_count(&m) == 2) || atomic_load(&a.done));
        AWAIT(atomic_load(&a.done));
        test_threads_join(ta);
        ASSERT_EQ(a.result, ETIMEDOUT);
        ASSERT_GE(a.returned_at, a.deadline);
        AWAIT(park__wait_count(&m) == 1); /* b, still waiting */
        ASSERT_FALSE(atomic_load(&b.done));
        park_mutex_unlock(&m);
        AWAIT(atomic_load(&b.done));
        ASSERT_EQ(b.result, 0);
        ASSERT_FALSE(park_mutex_try_lock(&m));
        finish_locker(&b, tb);
        ASSERT_EQ(park__wait_count(&m), 0);
        if (both_queued)
            break;
        park_mutex_lock(&m);
    }
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

/* Mutual exclusion oracle: plain increments inside the critical section
 * would be torn (and reported by TSan) if two threads were inside. */
struct excl {
    park_mutex_t m;
    long counter;
    long entries;
};

static void *exclusion_main(void *arg)
{
    struct excl *e = arg;
    for (int i = 0; i < 3000; i++) {
        switch (i % 3) {
        case 0:
            park_mutex_lock(&e->m);
            break;
        case 1:
            while (!park_mutex_try_lock(&e->m)) {
            }
            break;
        default:
            while (park_mutex_lock_until(&e->m, park_deadline_in(100000)) != 0) {
            }
            break;
        }
        for (int k = 0; k < 10; k++)
            e->counter++;
        if (e->counter != 10)
            test_fail(__FILE__, __LINE__, "two holders inside: counter %ld", e->counter);
        e->counter -= 10;
        e->entries++;
        park_mutex_unlock(&e->m);
    }
    return NULL;
}

TEST(mutex_admits_one_holder_at_a_time)
{
    enum { THREADS = 4 };
    struct excl e = {PARK_MUTEX_INIT, 0, 0};
    test_threads_t *t = test_threads_start(THREADS, exclusion_main, &e, 0);
    test_threads_join(t);
    ASSERT_EQ(e.counter, 0);
    ASSERT_EQ(e.entries, THREADS * 3000);
    ASSERT_EQ(park_mutex_destroy(&e.m), 0);
}

static park_mutex_t never_locked = PARK_MUTEX_INIT;

static void unlock_never_locked(void *arg)
{
    (void)arg;
    park_mutex_unlock(&never_locked);
}

static void unlock_twice(void *arg)
{
    park_mutex_t *m = arg;
    park_mutex_lock(m);
    park_mutex_unlock(m);
    park_mutex_unlock(m);
}

/* The child unlocks a mutex nobody locked (or unlocks twice); it must die
 * of SIGABRT and say which call was misused, in every build: the inline
 * unlock sends any word but L to the slow path, which checks. */
TEST(mutex_unlock_of_an_unlocked_mutex_aborts_with_a_message)
{
    test_expect_abort(unlock_never_locked, NULL, "park_mutex_unlock");
    test_expect_abort(unlock_never_locked, NULL, "not locked");
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    park_mutex_unlock(&m);
    test_expect_abort(unlock_twice, &m, "park_mutex_unlock");
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(mutex_size_is_4_to_16_bytes),
    TEST_ENTRY(mutex_static_initializer_is_unlocked),
    TEST_ENTRY(mutex_zeroed_memory_is_unlocked),
    TEST_ENTRY(mutex_calloc_memory_is_unlocked),
    TEST_ENTRY(mutex_init_makes_any_memory_an_unlocked_mutex),
    TEST_ENTRY(mutex_lock_then_unlock_frees_it),
    TEST_ENTRY(mutex_try_lock_takes_a_free_mutex),
    TEST_ENTRY(mutex_try_lock_fails_on_a_held_mutex_and_keeps_it_held),
    TEST_ENTRY(mutex_lock_until_past_deadline_takes_a_free_mutex),
    TEST_ENTRY(mutex_lock_until_past_deadline_on_a_held_mutex_times_out_at_once),
    TEST_ENTRY(mutex_lock_until_near_deadline_on_a_held_mutex_times_out_not_before_it),
    TEST_ENTRY(mutex_lock_until_takes_the_mutex_when_unlocked_before_the_deadline),
    TEST_ENTRY(mutex_lock_until_forever_takes_a_free_mutex),
    TEST_ENTRY(mutex_lock_until_forever_waits_for_unlock),
    TEST_ENTRY(mutex_destroy_of_a_free_mutex_returns_zero),
    TEST_ENTRY(mutex_destroy_of_null_returns_zero),
    TEST_ENTRY(mutex_destroy_of_a_held_mutex_is_ebusy_and_keeps_it_usable),
    TEST_ENTRY(mutex_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable),
    TEST_ENTRY(mutex_may_be_unlocked_by_another_thread),
    TEST_ENTRY(mutex_unlock_by_another_thread_wakes_a_waiter),
    TEST_ENTRY(mutex_unlock_wakes_a_blocked_waiter),
    TEST_ENTRY(mutex_locker_dozes_with_the_word_clean_then_queues_and_gets_it),
    TEST_ENTRY(mutex_locker_is_counted_inside_while_it_waits_and_not_after_taking_it),
    TEST_ENTRY(mutex_timed_out_locker_is_not_counted_inside),
    TEST_ENTRY(mutex_each_unlock_lets_one_of_several_waiters_in),
    TEST_ENTRY(mutex_late_woken_waiter_does_not_hold_back_the_queue),
    TEST_ENTRY(mutex_hands_off_to_an_old_waiter_while_a_woken_one_is_on_its_way),
    TEST_ENTRY(mutex_lock_until_timing_out_behind_a_waiter_leaves_the_mutex_working),
    TEST_ENTRY(mutex_lock_until_timing_out_ahead_of_a_waiter_leaves_the_mutex_working),
    TEST_ENTRY(mutex_admits_one_holder_at_a_time),
    TEST_ENTRY(mutex_unlock_of_an_unlocked_mutex_aborts_with_a_message),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
