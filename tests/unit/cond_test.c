/* tests/unit/cond_test.c: park_cond, one behaviour per test.
 *
 * "Thread T waits" is observed in the wait queue itself (park__wait_count
 * of the condition variable's or the mutex's key), so no verdict depends
 * on a sleep; the timing asserted is only that a timed wait never returns
 * before its deadline. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "wait/wait.h"

#include "test.h"

/* ---- a waiting thread ----------------------------------------------------- */

struct waiter {
    park_cond_t *c;
    park_mutex_t *m;
    park_time_t deadline; /* PARK_FOREVER: park_cond_wait */
    int *pred;            /* NULL: wait once; else wait while *pred == 0 */
    int *order;           /* where to write the order of return */
    atomic_int *returned; /* bumped on return, under the mutex */
    int id;
    int result;
    atomic_bool done;
};

static void *waiter_main(void *arg)
{
    struct waiter *x = arg;
    park_mutex_lock(x->m);
    do {
        if (x->deadline == PARK_FOREVER)
            x->result = park_cond_wait(x->c, x->m);
        else
            x->result = park_cond_wait_until(x->c, x->m, x->deadline);
    } while (x->pred && *x->pred == 0);
    /* The mutex is held again on return: nobody else is inside. */
    if (x->returned) {
        int n = atomic_fetch_add(x->returned, 1);
        if (x->order)
            x->order[n] = x->id;
    }
    park_mutex_unlock(x->m);
    atomic_store(&x->done, true);
    return NULL;
}

/* ---- basics --------------------------------------------------------------- */

TEST(cond_size_is_4_bytes)
{
    ASSERT_EQ(sizeof(park_cond_t), 4);
}

TEST(cond_static_initializer_and_zeroed_memory_have_no_waiters)
{
    park_cond_t a = PARK_COND_INIT, b;
    memset(&b, 0, sizeof b);
    park_cond_signal(&a);
    park_cond_broadcast(&b);
    ASSERT_EQ(park_cond_destroy(&a), 0);
    ASSERT_EQ(park_cond_destroy(&b), 0);
    park_cond_init(&a);
    ASSERT_EQ(park_cond_destroy(&a), 0);
}

TEST(cond_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_cond_destroy(NULL), 0);
}

TEST(cond_signal_with_nobody_waiting_is_not_remembered)
{
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    park_cond_signal(&c);
    park_cond_broadcast(&c);
    park_mutex_lock(&m);
    ASSERT_EQ(park_cond_wait_until(&c, &m, park_deadline_in(2 * MS)), ETIMEDOUT);
    park_mutex_unlock(&m);
}

TEST(cond_wait_until_past_deadline_times_out_with_the_mutex_held)
{
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    ASSERT_EQ(park_cond_wait_until(&c, &m, 0), ETIMEDOUT);
    ASSERT_FALSE(park_mutex_try_lock(&m));
    park_mutex_unlock(&m);
    ASSERT_EQ(park_cond_destroy(&c), 0);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(cond_wait_until_never_returns_before_its_deadline)
{
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    park_mutex_lock(&m);
    for (int i = 0; i < 5; i++) {
        park_time_t deadline = park_deadline_in(3 * MS);
        ASSERT_EQ(park_cond_wait_until(&c, &m, deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now, deadline + LATE_NS);
    }
    park_mutex_unlock(&m);
}

TEST(cond_wait_releases_the_mutex_while_it_waits)
{
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    struct waiter x = {.c = &c, .m = &m, .deadline = PARK_FOREVER};
    test_threads_t *t = test_threads_start(1, waiter_main, &x, sizeof x);
    AWAIT(park__wait_count(&c) == 1);
    ASSERT_TRUE(park_mutex_try_lock(&m)); /* the waiter let it go */
    ASSERT_EQ(park_cond_destroy(&c), EBUSY);
    park_cond_signal(&c);
    park_mutex_unlock(&m);
    test_threads_join(t);
    ASSERT_EQ(x.result, 0);
    ASSERT_EQ(park_cond_destroy(&c), 0);
}

/* ---- signal ------------------------------------------------------------- */

TEST(cond_signal_wakes_exactly_one_waiter_oldest_first)
{
    enum { N = 3 };
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    atomic_int returned = 0;
    int order[N];
    struct waiter x[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        x[i] = (struct waiter){.c = &c,
                               .m = &m,
                               .deadline = PARK_FOREVER,
                               .order = order,
                               .returned = &returned,
                               .id = i};
        t[i] = test_threads_start(1, waiter_main, &x[i], sizeof x[i]);
        AWAIT(park__wait_count(&c) == (size_t)i + 1); /* queued in this order */
    }
    for (int i = 0; i < N; i++) {
        park_mutex_lock(&m);
        park_cond_signal(&c);
        park_mutex_unlock(&m);
        AWAIT(atomic_load(&returned) == i + 1);
        /* The others are still queued: one signal, one waiter. */
        ASSERT_EQ(park__wait_count(&c), (size_t)(N - 1 - i));
        park_mutex_lock(&m); /* order[] is written under it */
        int who = order[i];
        park_mutex_unlock(&m);
        ASSERT_EQ(who, i);
    }
    for (int i = 0; i < N; i++)
        test_threads_join(t[i]);
}

TEST(cond_signal_under_the_mutex_moves_the_waiter_onto_it)
{
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    atomic_int returned = 0;
    struct waiter x = {.c = &c, .m = &m, .deadline = PARK_FOREVER, .returned = &returned};
    test_threads_t *t = test_threads_start(1, waiter_main, &x, sizeof x);
    AWAIT(park__wait_count(&c) == 1);
    park_mutex_lock(&m);
    park_cond_signal(&c);
    /* Taken, and queued on the mutex instead of woken onto it: the
     * unlock hands it the mutex. */
    ASSERT_EQ(park__wait_count(&c), 0);
    ASSERT_EQ(park__wait_count(&m), 1);
    test_sleep_ns(5 * MS);
    ASSERT_EQ(atomic_load(&returned), 0);
    park_mutex_unlock(&m);
    test_threads_join(t);
    ASSERT_EQ(atomic_load(&returned), 1);
    ASSERT_EQ(park__wait_count(&m), 0);
    ASSERT_EQ(park_mutex_destroy(&m), 0);
}

TEST(cond_signal_without_the_mutex_reaches_a_waiter)
{
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    struct waiter x = {.c = &c, .m = &m, .deadline = park_deadline_in(HANG_NS)};
    test_threads_t *t = test_threads_start(1, waiter_main, &x, sizeof x);
    AWAIT(park__wait_count(&c) == 1);
    park_cond_signal(&c);
    test_threads_join(t);
    ASSERT_EQ(x.result, 0);
}

TEST(cond_timed_out_waiter_leaves_the_signal_to_the_next)
{
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    struct waiter early = {.c = &c, .m = &m, .deadline = park_deadline_in(50 * MS)};
    struct waiter late = {.c = &c, .m = &m, .deadline = PARK_FOREVER};
    test_threads_t *te = test_threads_start(1, waiter_main, &early, sizeof early);
    AWAIT(park__wait_count(&c) == 1 || atomic_load(&early.done)); /* queued first */
    test_threads_t *tl = test_threads_start(1, waiter_main, &late, sizeof late);
    AWAIT(atomic_load(&early.done));
    ASSERT_EQ(early.result, ETIMEDOUT);
    AWAIT(park__wait_count(&c) == 1);
    park_cond_signal(&c);
    test_threads_join(tl);
    test_threads_join(te);
    ASSERT_EQ(late.result, 0);
}

/* ---- broadcast ------------------------------------------------------------ */

TEST(cond_broadcast_wakes_every_waiter_each_with_the_mutex)
{
    enum { N = 8 };
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    atomic_int returned = 0;
    int order[N];
    struct waiter x[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        x[i] = (struct waiter){.c = &c,
                               .m = &m,
                               .deadline = PARK_FOREVER,
                               .order = order,
                               .returned = &returned,
                               .id = i};
        t[i] = test_threads_start(1, waiter_main, &x[i], sizeof x[i]);
        AWAIT(park__wait_count(&c) == (size_t)i + 1);
    }
    park_cond_broadcast(&c);
    for (int i = 0; i < N; i++)
        test_threads_join(t[i]);
    ASSERT_EQ(atomic_load(&returned), N);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(x[i].result, 0);
    ASSERT_EQ(park_cond_destroy(&c), 0);
}

TEST(cond_broadcast_sends_waiters_to_the_mutex_one_at_a_time)
{
    enum { N = 6 };
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    atomic_int returned = 0;
    struct waiter x[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        x[i] = (struct waiter){.c = &c, .m = &m, .deadline = PARK_FOREVER, .returned = &returned};
        t[i] = test_threads_start(1, waiter_main, &x[i], sizeof x[i]);
        AWAIT(park__wait_count(&c) == (size_t)i + 1);
    }
    park_mutex_lock(&m);
    park_cond_broadcast(&c);
    ASSERT_EQ(park__wait_count(&c), 0); /* every waiter was taken */
    /* The first goes to the mutex, which is held; the others wait for it
     * to hold the mutex: no herd queues on the mutex. */
    AWAIT(park__wait_count(&m) == 1);
    test_sleep_ns(20 * MS);
    ASSERT_LE(park__wait_count(&m), 1); /* (0 for a moment after a spurious wake-up) */
    ASSERT_EQ(atomic_load(&returned), 0);
    park_mutex_unlock(&m);
    for (int i = 0; i < N; i++)
        test_threads_join(t[i]);
    ASSERT_EQ(atomic_load(&returned), N);
}

TEST(cond_broadcast_takes_timed_waiters_whose_deadline_passes_while_they_wait_their_turn)
{
    enum { N = 4 };
    park_cond_t c = PARK_COND_INIT;
    park_mutex_t m = PARK_MUTEX_INIT;
    park_time_t deadline = park_deadline_in(500 * MS);
    struct waiter x[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        x[i] = (struct waiter){.c = &c, .m = &m, .deadline = deadline};
        t[i] = test_threads_start(1, waiter_main, &x[i], sizeof x[i]);
        AWAIT(park__wait_count(&c) == (size_t)i + 1);
    }
    park_mutex_lock(&m);
    park_cond_broadcast(&c);
    /* Held past every deadline while the chain waits for the mutex. */
    while (park_now() <= deadline + 10 * MS)
        test_sleep_ns(MS);
    park_mutex_unlock(&m);
    for (int i = 0; i < N; i++) {
        test_threads_join(t[i]);
        ASSERT_EQ(x[i].result, 0); /* taken by the broadcast: signalled */
    }
}

/* ---- races ------------------------------------------------------------------ */

struct race {
    park_cond_t c;
    park_mutex_t m;
    int tokens;
    bool stop;
    long taken_timed, taken_untimed;
    uint64_t seed;
};

/* Waits with deadlines of 0 to 20 us, again and again; takes a token only
 * when a wait says it was signalled. */
static void *race_timed(void *arg)
{
    struct race *r = arg;
    uint64_t seed = r->seed;
    park_mutex_lock(&r->m);
    while (!r->stop) {
        park_time_t d = park_deadline_in(test_rng_below(&seed, 20000));
        if (park_cond_wait_until(&r->c, &r->m, d) == 0 && r->tokens > 0) {
            r->tokens--;
            r->taken_timed++;
        }
    }
    park_mutex_unlock(&r->m);
    return NULL;
}

/* Waits for tokens; a wait that times out (after seconds) means a signal
 * was lost while a token waited. */
static void *race_untimed(void *arg)
{
    struct race *r = arg;
    park_mutex_lock(&r->m);
    while (!r->stop) {
        while (r->tokens == 0 && !r->stop)
            if (park_cond_wait_until(&r->c, &r->m, park_deadline_in(HANG_NS / 4)) == ETIMEDOUT)
                test_fail(__FILE__, __LINE__, "lost wake-up: %d token(s) left", r->tokens);
        if (r->tokens > 0) {
            r->tokens--;
            r->taken_untimed++;
        }
    }
    park_mutex_unlock(&r->m);
    return NULL;
}

TEST(cond_signal_racing_a_timing_out_waiter_is_never_lost)
{
    static struct race r;
    memset(&r, 0, sizeof r);
    r.seed = test_rng_seed(1);
    test_threads_t *timed = test_threads_start(1, race_timed, &r, sizeof r);
    test_threads_t *untimed = test_threads_start(1, race_untimed, &r, sizeof r);
    long n = (long)test_scaled(10000);
    for (long i = 0; i < n; i++) {
        park_mutex_lock(&r.m);
        r.tokens++;
        park_cond_signal(&r.c);
        park_mutex_unlock(&r.m);
        /* The next token only once this one is taken. */
        uint64_t give_up = test_now_ns() + HANG_NS;
        for (;;) {
            park_mutex_lock(&r.m);
            int left = r.tokens;
            park_mutex_unlock(&r.m);
            if (left == 0)
                break;
            ASSERT_LT(test_now_ns(), give_up);
            test_sleep_ns(1000);
        }
    }
    park_mutex_lock(&r.m);
    r.stop = true;
    park_cond_broadcast(&r.c);
    park_mutex_unlock(&r.m);
    test_threads_join(timed);
    test_threads_join(untimed);
    ASSERT_EQ(r.taken_timed + r.taken_untimed, n);
}

/* Broadcasts racing waiters that time out, wait again, and re-check: every
 * waiter that must see the predicate sees it. */
struct storm {
    park_cond_t c;
    park_mutex_t m;
    long round; /* bumped under m by the broadcaster */
    uint64_t seed;
};

static void *storm_waiter(void *arg)
{
    struct storm *s = arg;
    uint64_t seed = test_rng_seed((unsigned)(uintptr_t)&seed);
    long rounds = (long)test_scaled(20000);
    park_mutex_lock(&s->m);
    for (;;) {
        long seen = s->round;
        if (seen >= rounds)
            break;
        while (s->round == seen) {
            park_time_t d = test_rng_below(&seed, 4) == 0
                                ? park_deadline_in(test_rng_below(&seed, 50000))
                                : PARK_FOREVER;
            park_cond_wait_until(&s->c, &s->m, d);
        }
    }
    park_mutex_unlock(&s->m);
    return NULL;
}

TEST(cond_broadcast_storm_with_timed_waiters_loses_nobody)
{
    enum { N = 6 };
    static struct storm s;
    memset(&s, 0, sizeof s);
    test_threads_t *t = test_threads_start(N, storm_waiter, &s, 0); /* all share s */
    long rounds = (long)test_scaled(20000);
    for (long i = 0; i < rounds; i++) {
        park_mutex_lock(&s.m);
        s.round++;
        park_cond_broadcast(&s.c);
        park_mutex_unlock(&s.m);
        if (i % 4 == 0)
            test_sleep_ns(1000);
    }
    test_threads_join(t); /* a waiter that missed the last round hangs: the watchdog */
    ASSERT_EQ(park_cond_destroy(&s.c), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(cond_size_is_4_bytes),
    TEST_ENTRY(cond_static_initializer_and_zeroed_memory_have_no_waiters),
    TEST_ENTRY(cond_destroy_of_null_returns_zero),
    TEST_ENTRY(cond_signal_with_nobody_waiting_is_not_remembered),
    TEST_ENTRY(cond_wait_until_past_deadline_times_out_with_the_mutex_held),
    TEST_ENTRY(cond_wait_until_never_returns_before_its_deadline),
    TEST_ENTRY(cond_wait_releases_the_mutex_while_it_waits),
    TEST_ENTRY(cond_signal_wakes_exactly_one_waiter_oldest_first),
    TEST_ENTRY(cond_signal_under_the_mutex_moves_the_waiter_onto_it),
    TEST_ENTRY(cond_signal_without_the_mutex_reaches_a_waiter),
    TEST_ENTRY(cond_timed_out_waiter_leaves_the_signal_to_the_next),
    TEST_ENTRY(cond_broadcast_wakes_every_waiter_each_with_the_mutex),
    TEST_ENTRY(cond_broadcast_sends_waiters_to_the_mutex_one_at_a_time),
    TEST_ENTRY(cond_broadcast_takes_timed_waiters_whose_deadline_passes_while_they_wait_their_turn),
    TEST_ENTRY(cond_signal_racing_a_timing_out_waiter_is_never_lost),
    TEST_ENTRY(cond_broadcast_storm_with_timed_waiters_loses_nobody),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
