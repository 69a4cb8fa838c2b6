/* tests/unit/sem_test.c: park_sem, one behaviour per test; its
 * asynchronous acquisitions: sem_async_test.c. Lined up as
 * tests/unit/sem_test.h says. */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "wait/wait.h"

#include "sem_test.h"
#include "test.h"

/* A thread that takes n permits together (acquire_n, or acquire_n_until
 * when timed). */
struct many {
    park_sem_t *s;
    uint32_t n;
    bool timed;
    park_time_t deadline;
    atomic_bool *go; /* optional, as for struct acquirer */
    int result;
    atomic_bool done;
};

static void *many_main(void *arg)
{
    struct many *m = arg;
    await_go(m->go);
    m->result = m->timed ? park_sem_acquire_n_until(m->s, m->n, m->deadline)
                         : park_sem_acquire_n(m->s, m->n);
    atomic_store(&m->done, true);
    return NULL;
}

/* Starts a waiter for n permits and waits until it is queued (behind the
 * waiters already there). */
static test_threads_t *queue_many(struct many *m, park_sem_t *s, uint32_t n, park_time_t deadline)
{
    size_t base = park__wait_count(s);
    *m = (struct many){.s = s, .n = n, .timed = deadline != PARK_FOREVER, .deadline = deadline};
    test_threads_t *t = test_threads_start(1, many_main, m, sizeof *m);
    AWAIT(park__wait_count(s) == base + 1 || atomic_load(&m->done));
    return t;
}

TEST(sem_size_is_at_most_32_bytes)
{
    ASSERT_LE(sizeof(park_sem_t), 32);
}

TEST(sem_static_initializer_sets_count_and_max)
{
    park_sem_t s = PARK_SEM_INIT(2, 3);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 3);
    ASSERT_EQ(park_sem_release(&s, 1), EOVERFLOW);
    ASSERT_EQ(park_sem_count(&s), 3);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

TEST(sem_init_sets_count_and_max)
{
    park_sem_t s;
    memset(&s, 0xa5, sizeof s);
    ASSERT_EQ(park_sem_init(&s, 1, 4), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_EQ(park_sem_release(&s, 3), 0);
    ASSERT_EQ(park_sem_count(&s), 4);
    ASSERT_EQ(park_sem_release(&s, 1), EOVERFLOW);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

TEST(sem_init_accepts_zero_initial_and_initial_equal_to_max)
{
    park_sem_t s;
    ASSERT_EQ(park_sem_init(&s, 0, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_init(&s, 5, 5), 0);
    ASSERT_EQ(park_sem_count(&s), 5);
    ASSERT_EQ(park_sem_release(&s, 1), EOVERFLOW);
}

/* The largest count must not spill into the state word's other bits. */
TEST(sem_init_accepts_value_max)
{
    park_sem_t s;
    ASSERT_EQ(park_sem_init(&s, PARK_SEM_VALUE_MAX, PARK_SEM_VALUE_MAX), 0);
    ASSERT_EQ(park_sem_count(&s), PARK_SEM_VALUE_MAX);
    ASSERT_EQ(park_sem_release(&s, 1), EOVERFLOW);
    ASSERT_TRUE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_count(&s), PARK_SEM_VALUE_MAX - 1);
    ASSERT_EQ(park_sem_destroy(&s), 0);

    ASSERT_EQ(park_sem_init(&s, 0, PARK_SEM_VALUE_MAX), 0);
    ASSERT_EQ(park_sem_release(&s, PARK_SEM_VALUE_MAX), 0);
    ASSERT_EQ(park_sem_count(&s), PARK_SEM_VALUE_MAX);
    ASSERT_TRUE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

static void assert_init_rejected(uint32_t initial, uint32_t max)
{
    park_sem_t s = PARK_SEM_INIT(1, 3);
    park_sem_t before = s;
    ASSERT_EQ(park_sem_init(&s, initial, max), EINVAL);
    ASSERT_EQ(memcmp(&s, &before, sizeof s), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
}

TEST(sem_init_with_max_zero_is_einval_and_changes_nothing)
{
    assert_init_rejected(0, 0);
}

TEST(sem_init_with_initial_above_max_is_einval_and_changes_nothing)
{
    assert_init_rejected(3, 2);
    assert_init_rejected(PARK_SEM_VALUE_MAX, 1);
    assert_init_rejected(UINT32_MAX, PARK_SEM_VALUE_MAX);
}

TEST(sem_init_with_max_above_value_max_is_einval_and_changes_nothing)
{
    assert_init_rejected(0, PARK_SEM_VALUE_MAX + 1u);
    assert_init_rejected(1, UINT32_MAX);
    assert_init_rejected(UINT32_MAX, UINT32_MAX);
}

TEST(sem_try_acquire_takes_permits_until_none_remain)
{
    park_sem_t s = PARK_SEM_INIT(3, 3);
    for (uint32_t left = 3; left > 0; left--) {
        ASSERT_EQ(park_sem_count(&s), left);
        ASSERT_TRUE(park_sem_try_acquire(&s));
    }
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_acquire_takes_a_free_permit)
{
    park_sem_t s = PARK_SEM_INIT(2, 2);
    park_sem_acquire(&s);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_sem_acquire(&s);
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_acquire_until_past_deadline_takes_a_free_permit)
{
    park_sem_t s = PARK_SEM_INIT(2, 2);
    ASSERT_EQ(park_sem_acquire_until(&s, 0), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_EQ(park_sem_acquire_until(&s, park_now()), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_acquire_until_past_deadline_on_an_empty_sem_times_out_and_keeps_count)
{
    park_sem_t s = PARK_SEM_INIT(0, 2);
    park_time_t start = park_now();
    ASSERT_EQ(park_sem_acquire_until(&s, 0), ETIMEDOUT);
    ASSERT_EQ(park_sem_acquire_until(&s, start), ETIMEDOUT);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park__wait_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
    /* Nothing is left behind: a release goes to the count. */
    ASSERT_EQ(park_sem_release(&s, 2), 0);
    ASSERT_EQ(park_sem_count(&s), 2);
}

TEST(sem_acquire_until_near_deadline_times_out_not_before_it)
{
    park_sem_t s = PARK_SEM_INIT(0, 1);
    /* From just ahead to well ahead, so that neither a check before parking
     * nor the parked wait may give up early. */
    static const uint64_t ahead_ns[] = {1000, 50000, 500000, MS, 2 * MS, 5 * MS, 10 * MS};
    for (size_t i = 0; i < sizeof ahead_ns / sizeof ahead_ns[0]; i++) {
        park_time_t deadline = park_deadline_in(ahead_ns[i]);
        ASSERT_EQ(park_sem_acquire_until(&s, deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now - deadline, LATE_NS);
        ASSERT_EQ(park_sem_count(&s), 0);
        ASSERT_EQ(park__wait_count(&s), 0);
    }
    ASSERT_EQ(park_sem_destroy(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
}

TEST(sem_acquire_until_takes_a_permit_released_before_the_deadline)
{
    park_sem_t s = PARK_SEM_INIT(0, 1);
    struct acquirer a = {.s = &s, .timed = true, .deadline = park_deadline_in(HANG_NS)};
    test_threads_t *t = start_acquirer(&a);
    AWAIT(park__wait_count(&s) == 1);
    ASSERT_FALSE(atomic_load(&a.done));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    test_threads_join(t);
    ASSERT_EQ(a.result, 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

TEST(sem_acquire_until_forever_takes_a_free_permit)
{
    park_sem_t s = PARK_SEM_INIT(1, 1);
    ASSERT_EQ(park_sem_acquire_until(&s, PARK_FOREVER), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
}

/* Under fault injection the futex reports early timeouts: a wait without a
 * deadline must absorb them. */
TEST(sem_acquire_until_forever_waits_for_a_release)
{
    park_sem_t s = PARK_SEM_INIT(0, 1);
    struct acquirer a = {.s = &s, .timed = true, .deadline = PARK_FOREVER};
    test_threads_t *t = start_acquirer(&a);
    AWAIT(park__wait_count(&s) == 1);
    test_sleep_ns(20 * MS); /* let faults hit the sleeping waiter */
    ASSERT_FALSE(atomic_load(&a.done));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    test_threads_join(t);
    ASSERT_EQ(a.result, 0);
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_release_zero_is_einval_and_keeps_count)
{
    park_sem_t s = PARK_SEM_INIT(1, 3);
    ASSERT_EQ(park_sem_release(&s, 0), EINVAL);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_sem_t full = PARK_SEM_INIT(3, 3);
    ASSERT_EQ(park_sem_release(&full, 0), EINVAL);
    ASSERT_EQ(park_sem_count(&full), 3);
}

TEST(sem_release_zero_with_waiters_is_einval_and_grants_nothing)
{
    park_sem_t s = PARK_SEM_INIT(0, 3);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    ASSERT_EQ(park_sem_release(&s, 0), EINVAL);
    ASSERT_EQ(park__wait_count(&s), 1);
    ASSERT_FALSE(atomic_load(&a[0].done));
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_release_beyond_max_fails_and_keeps_count)
{
    park_sem_t s = PARK_SEM_INIT(2, 3);
    ASSERT_EQ(park_sem_release(&s, 2), EOVERFLOW);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park_sem_release(&s, UINT32_MAX), EOVERFLOW);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park_sem_release(&s, PARK_SEM_VALUE_MAX + 1u), EOVERFLOW);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 3);
    ASSERT_EQ(park_sem_release(&s, 1), EOVERFLOW);
    ASSERT_EQ(park_sem_count(&s), 3);
}

/* With waiters queued the count is 0, so beyond max means n > max. */
TEST(sem_release_beyond_max_with_waiters_fails_and_grants_nothing)
{
    park_sem_t s = PARK_SEM_INIT(0, 2);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    ASSERT_EQ(park_sem_release(&s, 3), EOVERFLOW);
    ASSERT_EQ(park_sem_release(&s, UINT32_MAX), EOVERFLOW);
    ASSERT_EQ(park__wait_count(&s), 1);
    ASSERT_FALSE(atomic_load(&a[0].done));
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 2), 0); /* one to the waiter, one to the count */
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 1);
}

TEST(sem_fifo_release_n_wakes_exactly_n_of_m_waiters)
{
    enum { M = 5, N = 2 };
    park_sem_t s = PARK_SEM_INIT_FIFO(0, M);
    atomic_int returned = 0;
    struct acquirer a[M];
    test_threads_t *t[M];
    queue_acquirers(&s, a, t, M, &returned);
    ASSERT_EQ(park_sem_release(&s, N), 0);
    AWAIT(atomic_load(&returned) >= N);
    test_sleep_ns(20 * MS); /* give a wrongly woken extra waiter time to show */
    ASSERT_EQ(atomic_load(&returned), N);
    ASSERT_EQ(park__wait_count(&s), M - N);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, M - N), 0);
    join_all(t, M);
    ASSERT_EQ(atomic_load(&returned), M);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

TEST(sem_release_beyond_the_waiters_grants_all_and_counts_the_rest)
{
    park_sem_t s = PARK_SEM_INIT(0, 5);
    struct acquirer a[2];
    test_threads_t *t[2];
    queue_acquirers(&s, a, t, 2, NULL);
    ASSERT_EQ(park_sem_release(&s, 5), 0);
    join_all(t, 2);
    ASSERT_EQ(park__wait_count(&s), 0);
    ASSERT_EQ(park_sem_count(&s), 3);
    ASSERT_EQ(park_sem_release(&s, 2), 0);
    ASSERT_EQ(park_sem_release(&s, 1), EOVERFLOW);
    ASSERT_EQ(park_sem_count(&s), 5);
}

TEST(sem_fifo_waiters_are_granted_in_arrival_order)
{
    enum { N = 5 };
    park_sem_t s = PARK_SEM_INIT_FIFO(0, N);
    atomic_int returned = 0;
    struct acquirer a[N];
    test_threads_t *t[N];
    queue_acquirers(&s, a, t, N, &returned);
    for (int next = 0; next < N; next++) {
        ASSERT_EQ(park_sem_release(&s, 1), 0);
        AWAIT(atomic_load(&returned) == next + 1);
        for (int i = 0; i < N; i++)
            ASSERT_EQ(atomic_load(&a[i].done), i <= next);
    }
    join_all(t, N);
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_fifo_try_acquire_fails_while_waiters_are_queued)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 3);
    atomic_int returned = 0;
    struct acquirer a[2];
    test_threads_t *t[2];
    queue_acquirers(&s, a, t, 2, &returned);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    /* The permit goes to the head of the queue, not to the count. */
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_count(&s), 0);
    AWAIT(atomic_load(&a[0].done));
    /* Also with the last waiter: its permit is not up for grabs either. */
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_count(&s), 0);
    join_all(t, 2);
    ASSERT_EQ(atomic_load(&returned), 2);
}

TEST(sem_fifo_acquire_until_does_not_take_a_permit_handed_to_a_waiter)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 3);
    struct acquirer a[2];
    test_threads_t *t[2];
    queue_acquirers(&s, a, t, 2, NULL);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_acquire_until(&s, 0), ETIMEDOUT);
    ASSERT_EQ(park_sem_acquire_until(&s, park_deadline_in(2 * MS)), ETIMEDOUT);
    AWAIT(atomic_load(&a[0].done));
    ASSERT_EQ(park__wait_count(&s), 1);
    ASSERT_FALSE(atomic_load(&a[1].done));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    join_all(t, 2);
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_destroy_without_waiters_returns_zero)
{
    park_sem_t s = PARK_SEM_INIT(0, 2);
    ASSERT_EQ(park_sem_destroy(&s), 0);
    park_sem_t t = PARK_SEM_INIT(2, 2);
    ASSERT_TRUE(park_sem_try_acquire(&t));
    ASSERT_EQ(park_sem_destroy(&t), 0);
}

TEST(sem_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_sem_destroy(NULL), 0);
}

TEST(sem_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable)
{
    park_sem_t s = PARK_SEM_INIT(0, 2);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    park_sem_t before = s;
    ASSERT_EQ(park_sem_destroy(&s), EBUSY);
    ASSERT_EQ(memcmp(&s, &before, sizeof s), 0);
    ASSERT_EQ(park__wait_count(&s), 1);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(a[0].result, 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

TEST(sem_count_reports_free_permits)
{
    park_sem_t s = PARK_SEM_INIT(3, 10);
    ASSERT_EQ(park_sem_count(&s), 3);
    park_sem_acquire(&s);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park_sem_release(&s, 5), 0);
    ASSERT_EQ(park_sem_count(&s), 7);
    while (park_sem_try_acquire(&s)) {
    }
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_fifo_count_is_zero_while_waiters_are_queued)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 4);
    struct acquirer a[2];
    test_threads_t *t[2];
    queue_acquirers(&s, a, t, 2, NULL);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 3), 0);
    join_all(t, 2);
    ASSERT_EQ(park_sem_count(&s), 2);
}

/* The timed waiter queues behind a waiter without deadline and gives up. */
TEST(sem_timed_out_waiter_behind_another_leaves_it_and_the_count_intact)
{
    park_sem_t s = PARK_SEM_INIT(0, 2);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    park_time_t deadline = park_deadline_in(10 * MS);
    ASSERT_EQ(park_sem_acquire_until(&s, deadline), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park__wait_count(&s), 1);
    ASSERT_FALSE(atomic_load(&a[0].done));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 2), 0);
    ASSERT_EQ(park_sem_count(&s), 2);
}

/* The timed waiter queues first and gives up while the other is behind it.
 * Its deadline must outlast queueing the second waiter; if this machine
 * was too slow for that, the round is repeated with a longer deadline. */
TEST(sem_timed_out_waiter_ahead_of_another_leaves_it_and_the_count_intact)
{
    park_sem_t s = PARK_SEM_INIT(0, 2);
    for (uint64_t ns = 50 * MS;; ns *= 2) {
        struct acquirer a = {.s = &s, .timed = true, .deadline = park_deadline_in(ns)};
        struct acquirer b = {.s = &s};
        test_threads_t *ta = start_acquirer(&a);
        AWAIT(park__wait_count(&s) == 1 || atomic_load(&a.done));
        bool both_queued = false;
        test_threads_t *tb = start_acquirer(&b);
        AWAIT((both_queued = park__wait_count(&s) == 2) || atomic_load(&a.done));
        test_threads_join(ta);
        ASSERT_EQ(a.result, ETIMEDOUT);
        ASSERT_GE(a.returned_at, a.deadline);
        AWAIT(park__wait_count(&s) == 1); /* b, still waiting */
        ASSERT_FALSE(atomic_load(&b.done));
        ASSERT_EQ(park_sem_count(&s), 0);
        ASSERT_EQ(park_sem_release(&s, 1), 0);
        test_threads_join(tb);
        ASSERT_EQ(b.result, 0);
        ASSERT_EQ(park_sem_count(&s), 0);
        ASSERT_EQ(park__wait_count(&s), 0);
        if (both_queued)
            break;
    }
    ASSERT_EQ(park_sem_release(&s, 2), 0);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* Permit oracle: never more holders inside than permits, none lost. */
struct permits {
    park_sem_t s;
    atomic_int inside;
    atomic_int worst;
};

static void *permits_main(void *arg)
{
    struct permits *p = arg;
    for (int i = 0; i < 3000; i++) {
        switch (i % 3) {
        case 0:
            park_sem_acquire(&p->s);
            break;
        case 1:
            while (!park_sem_try_acquire(&p->s)) {
            }
            break;
        default:
            while (park_sem_acquire_until(&p->s, park_deadline_in(100000)) != 0) {
            }
            break;
        }
        int in = atomic_fetch_add(&p->inside, 1) + 1;
        int worst = atomic_load(&p->worst);
        while (in > worst && !atomic_compare_exchange_weak(&p->worst, &worst, in)) {
        }
        atomic_fetch_sub(&p->inside, 1);
        if (park_sem_release(&p->s, 1) != 0)
            test_fail(__FILE__, __LINE__, "release of a held permit failed");
    }
    return NULL;
}

TEST(sem_never_admits_more_holders_than_permits)
{
    struct permits p = {PARK_SEM_INIT(2, 2), 0, 0};
    test_threads_join(test_threads_start(4, permits_main, &p, 0));
    ASSERT_LE(atomic_load(&p.worst), 2);
    ASSERT_GE(atomic_load(&p.worst), 1);
    ASSERT_EQ(park_sem_count(&p.s), 2);
    ASSERT_EQ(park_sem_destroy(&p.s), 0);
}

TEST(sem_init_fifo_rejects_what_init_rejects_and_changes_nothing)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(1, 2);
    ASSERT_EQ(park_sem_init_fifo(&s, 0, 0), EINVAL);
    ASSERT_EQ(park_sem_init_fifo(&s, 3, 2), EINVAL);
    ASSERT_EQ(park_sem_init_fifo(&s, 0, PARK_SEM_VALUE_MAX + 1u), EINVAL);
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_EQ(park_sem_init_fifo(&s, 2, PARK_SEM_VALUE_MAX), 0);
    ASSERT_EQ(park_sem_count(&s), 2);
}

TEST(sem_init_fifo_makes_a_fifo_semaphore)
{
    park_sem_t s;
    ASSERT_EQ(park_sem_init_fifo(&s, 0, 2), 0);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s)); /* handed to the waiter */
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 0);
}

/* Default mode: a waiter that has waited about 1 ms is owed the next
 * permit, so a running thread cannot take it (no barging while a hand-off
 * is owed). */
TEST(sem_default_hands_a_released_permit_to_a_waiter_older_than_1ms)
{
    park_sem_t s = PARK_SEM_INIT(0, 2);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    test_sleep_ns(3 * MS); /* choreography: the waiter is owed a hand-off */
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_count(&s), 0);
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* Default mode: the hand-off to a waiter older than 1 ms comes also while
 * a woken waiter is on its way (K), which otherwise lets releases skip the
 * lock: here K is set by hand and nobody owns it, and a hog releases and
 * takes the permit back. Every 64th release of a thread looks whether a
 * hand-off is due, so within a few hundred the waiter has the permit. */
TEST(sem_default_hands_off_to_an_old_waiter_while_a_woken_one_is_on_its_way)
{
    park_sem_t s = PARK_SEM_INIT(1, 1);
    ASSERT_TRUE(park_sem_try_acquire(&s));
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    __atomic_fetch_or(&s.state_, PARK__SEM_WOKEN, __ATOMIC_RELAXED);
    test_sleep_ns(3 * MS); /* choreography: the waiter is owed a hand-off */
    int releases = 0;
    bool held = true;
    while (!atomic_load(&a[0].done) && releases < 100000) {
        ASSERT_EQ(park_sem_release(&s, 1), 0);
        releases++;
        held = park_sem_try_acquire(&s);
        if (!held)
            break; /* handed off: the hog's try finds nothing */
    }
    ASSERT_FALSE(held);
    ASSERT_LE(releases, 64);
    join_all(t, 1);
    ASSERT_EQ(a[0].result, 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    __atomic_fetch_and(&s.state_, ~PARK__SEM_WOKEN, __ATOMIC_RELAXED);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* Default mode: permits released beyond what a woken waiter needs stay
 * free for anyone (they are not parked in the queue). */
TEST(sem_default_release_of_more_permits_than_waiters_leaves_them_free)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    ASSERT_EQ(park_sem_release(&s, 3), 0);
    ASSERT_TRUE(park_sem_try_acquire(&s)); /* at least 2 stay free */
    ASSERT_TRUE(park_sem_try_acquire(&s));
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 4), 0);
    ASSERT_EQ(park_sem_release(&s, 1), EOVERFLOW);
    ASSERT_EQ(park_sem_count(&s), 4);
}

/* ---- several permits at once --------------------------------------------------- */

TEST(sem_acquire_n_of_zero_or_beyond_max_is_einval_at_once_and_takes_nothing)
{
    park_sem_t s = PARK_SEM_INIT(2, 3);
    park_sem_t empty = PARK_SEM_INIT(0, 3); /* would block forever if it waited */
    park_sem_t fifo = PARK_SEM_INIT_FIFO(0, 3);
    park_sem_t *sems[] = {&s, &empty, &fifo};
    for (size_t i = 0; i < 3; i++) {
        uint32_t before = park_sem_count(sems[i]);
        ASSERT_EQ(park_sem_acquire_n(sems[i], 0), EINVAL);
        ASSERT_EQ(park_sem_acquire_n(sems[i], 4), EINVAL);
        ASSERT_EQ(park_sem_acquire_n(sems[i], UINT32_MAX), EINVAL);
        ASSERT_EQ(park_sem_acquire_n_until(sems[i], 0, PARK_FOREVER), EINVAL);
        ASSERT_EQ(park_sem_acquire_n_until(sems[i], 4, park_deadline_in(HANG_NS)), EINVAL);
        ASSERT_EQ(park_sem_acquire_n_until(sems[i], PARK_SEM_VALUE_MAX, 0), EINVAL);
        ASSERT_EQ(park_sem_count(sems[i]), before);
        ASSERT_EQ(park__wait_count(sems[i]), 0);
        ASSERT_EQ(park_sem_destroy(sems[i]), 0);
    }
}

TEST(sem_try_acquire_n_of_zero_or_beyond_max_fails_and_takes_nothing)
{
    park_sem_t s = PARK_SEM_INIT(3, 3);
    ASSERT_FALSE(park_sem_try_acquire_n(&s, 0));
    ASSERT_FALSE(park_sem_try_acquire_n(&s, 4));
    ASSERT_FALSE(park_sem_try_acquire_n(&s, UINT32_MAX));
    ASSERT_EQ(park_sem_count(&s), 3);
    park_sem_t fifo = PARK_SEM_INIT_FIFO(3, 3);
    ASSERT_FALSE(park_sem_try_acquire_n(&fifo, 0));
    ASSERT_FALSE(park_sem_try_acquire_n(&fifo, 4));
    ASSERT_EQ(park_sem_count(&fifo), 3);
}

TEST(sem_try_acquire_n_takes_all_or_nothing)
{
    park_sem_t s = PARK_SEM_INIT(3, 5);
    ASSERT_FALSE(park_sem_try_acquire_n(&s, 4));
    ASSERT_EQ(park_sem_count(&s), 3);
    ASSERT_TRUE(park_sem_try_acquire_n(&s, 2));
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_FALSE(park_sem_try_acquire_n(&s, 2));
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_TRUE(park_sem_try_acquire_n(&s, 1));
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 5), 0);
    ASSERT_TRUE(park_sem_try_acquire_n(&s, 5)); /* n == max */
    ASSERT_EQ(park_sem_count(&s), 0);
}

TEST(sem_acquire_n_takes_free_permits_even_past_its_deadline)
{
    park_sem_t s = PARK_SEM_INIT(5, 5);
    ASSERT_EQ(park_sem_acquire_n(&s, 2), 0);
    ASSERT_EQ(park_sem_count(&s), 3);
    ASSERT_EQ(park_sem_acquire_n_until(&s, 3, 0), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_acquire_n_until(&s, 1, 0), ETIMEDOUT);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_acquire_n_until(&s, 2, park_now()), ETIMEDOUT);
    ASSERT_EQ(park_sem_count(&s), 1); /* nothing taken */
    ASSERT_EQ(park__wait_count(&s), 0);
}

/* Checked in both modes: in the default one the waiter is young or owed
 * by the second release, depending on the machine's pace; either way it
 * has nothing until all three are there. */
static void acquire_n_blocks_until_n_are_free(park_sem_t *s)
{
    ASSERT_EQ(park_sem_release(s, 1), 0);
    struct many m;
    test_threads_t *t = queue_many(&m, s, 3, PARK_FOREVER);
    ASSERT_EQ(park_sem_release(s, 1), 0);
    test_sleep_ns(5 * MS); /* give a wrong grant time to show */
    ASSERT_FALSE(atomic_load(&m.done));
    ASSERT_EQ(park__wait_count(s), 1);
    ASSERT_EQ(park_sem_release(s, 1), 0);
    test_threads_join(t);
    ASSERT_EQ(m.result, 0);
    ASSERT_EQ(park_sem_count(s), 0);
    ASSERT_EQ(park__wait_count(s), 0);
    ASSERT_EQ(park_sem_release(s, 3), 0);
    ASSERT_EQ(park_sem_count(s), 3);
    ASSERT_EQ(park_sem_destroy(s), 0);
}

TEST(sem_acquire_n_blocks_until_n_are_free)
{
    park_sem_t s = PARK_SEM_INIT(0, 3);
    acquire_n_blocks_until_n_are_free(&s);
}

TEST(sem_fifo_acquire_n_blocks_until_n_are_free)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 3);
    acquire_n_blocks_until_n_are_free(&s);
}

TEST(sem_acquire_n_of_one_takes_one_permit_as_acquire_does)
{
    park_sem_t s = PARK_SEM_INIT(1, 2);
    ASSERT_EQ(park_sem_acquire_n(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    struct many m;
    test_threads_t *t = queue_many(&m, &s, 1, PARK_FOREVER);
    ASSERT_FALSE(park_sem_try_acquire_n(&s, 1));
    ASSERT_EQ(park_sem_release(&s, 2), 0); /* one to the waiter, one to the count */
    test_threads_join(t);
    ASSERT_EQ(m.result, 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_TRUE(park_sem_try_acquire_n(&s, 1));
    ASSERT_EQ(park_sem_acquire_n_until(&s, 1, park_deadline_in(MS)), ETIMEDOUT);
}

/* FIFO: the head waits for 3; the permits released meanwhile are gathered
 * for it, and the waiter of one behind it gets none of them. */
TEST(sem_fifo_large_head_holds_back_smaller_waiters_behind_it)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 4);
    struct many large;
    test_threads_t *tl = queue_many(&large, &s, 3, PARK_FOREVER);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    ASSERT_EQ(park_sem_release(&s, 2), 0);
    test_sleep_ns(5 * MS); /* give a wrong grant time to show */
    ASSERT_FALSE(atomic_load(&large.done));
    ASSERT_FALSE(atomic_load(&a[0].done));
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    test_threads_join(tl);
    ASSERT_EQ(large.result, 0);
    ASSERT_FALSE(atomic_load(&a[0].done));
    ASSERT_EQ(park__wait_count(&s), 1);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* FIFO: a waiter for more than are free takes those that are as it queues
 * (nobody was queued, so it is the head): none are left for a newcomer. */
TEST(sem_fifo_large_waiter_gathers_the_free_permits_as_it_queues)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(2, 4);
    struct many large;
    test_threads_t *tl = queue_many(&large, &s, 3, PARK_FOREVER);
    ASSERT_FALSE(atomic_load(&large.done));
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_FALSE(park_sem_try_acquire(&s));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    test_threads_join(tl);
    ASSERT_EQ(large.result, 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 4), 0);
    ASSERT_EQ(park_sem_count(&s), 4);
}

/* Default mode: a waiter of one behind a waiter of three that is not owed
 * a fair hand-off is woken for the one permit released. Whether a waiter
 * is owed depends on its age and on its bucket's last fair hand-off; no
 * clock can promise a waiter is young on a loaded machine, so the test
 * holds the bucket's fair hand-offs instead (the age is covered by the
 * owed tests below, which only need a waiter old enough). */
TEST(sem_default_smaller_waiter_passes_a_larger_one_that_is_not_owed)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    park__wait_hold_fair(&s, PARK_FOREVER);
    struct many large;
    test_threads_t *tl = queue_many(&large, &s, 3, PARK_FOREVER);
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    test_sleep_ns(3 * MS); /* old enough to be owed, but for the hold */
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    join_all(t, 1); /* passed the large one */
    ASSERT_EQ(a[0].result, 0);
    ASSERT_FALSE(atomic_load(&large.done));
    ASSERT_EQ(park_sem_count(&s), 0);
    park__wait_hold_fair(&s, 0);
    ASSERT_EQ(park_sem_release(&s, 3), 0);
    test_threads_join(tl);
    ASSERT_EQ(large.result, 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* Default mode: a release's fair look (park__wait_fair_due: should a
 * release that finds a woken waiter on its way come to the lock anyway?)
 * is due for a waiter of several from the moment it is owed, whatever
 * the bucket's pacing, and no longer once it is granted. Without it, a
 * woken waiter that waits for a CPU keeps every release off the lock, and
 * the owed waiter starts gathering only when the pacing allows, about
 * 1 ms later. The fair hand-offs are held (the pacing never allows). */
TEST(sem_default_passed_larger_waiter_makes_the_fair_look_due_once_it_is_owed)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    park__wait_hold_fair(&s, PARK_FOREVER);
    park_time_t before = park_now();
    struct many large;
    test_threads_t *tl = queue_many(&large, &s, 3, PARK_FOREVER);
    ASSERT_FALSE(park__wait_fair_due(&s, before + PARK__FAIR_NS - 1));
    ASSERT_EQ(park_sem_release(&s, 1), 0); /* passes it: too few */
    ASSERT_FALSE(atomic_load(&large.done));
    /* Due from its start + PARK__FAIR_NS, which is after `before` + that. */
    ASSERT_FALSE(park__wait_fair_due(&s, before + PARK__FAIR_NS - 1));
    ASSERT_TRUE(park__wait_fair_due(&s, park_now() + PARK__FAIR_NS));
    ASSERT_EQ(park_sem_release(&s, 2), 0); /* all three: handed over */
    test_threads_join(tl);
    ASSERT_EQ(large.result, 0);
    ASSERT_FALSE(park__wait_fair_due(&s, park_now() + 10 * PARK__FAIR_NS));
    park__wait_hold_fair(&s, 0);
    ASSERT_EQ(park_sem_release(&s, 3), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* Default mode: once the waiter of three has waited about 1 ms, released
 * permits are gathered for it (the count stays 0: nobody barges) and the
 * waiter of one behind it waits until it has them all. */
TEST(sem_default_owed_larger_waiter_gathers_permits_and_holds_back_smaller_ones)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    struct many large;
    test_threads_t *tl = queue_many(&large, &s, 3, PARK_FOREVER);
    test_sleep_ns(3 * MS); /* choreography: the large waiter is owed */
    struct acquirer a[1];
    test_threads_t *t[1];
    queue_acquirers(&s, a, t, 1, NULL);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(park_sem_release(&s, 1), 0);
        ASSERT_EQ(park_sem_count(&s), 0); /* gathered, not free */
        ASSERT_FALSE(park_sem_try_acquire(&s));
    }
    test_sleep_ns(5 * MS); /* give a wrong grant time to show */
    ASSERT_FALSE(atomic_load(&large.done));
    ASSERT_FALSE(atomic_load(&a[0].done));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    test_threads_join(tl);
    ASSERT_EQ(large.result, 0);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* The head of three times out holding two gathered permits: they go back
 * and wake the two waiters of one behind it (with Go issue 37852's bug
 * they would sleep on). Its deadline must outlast queueing the others and
 * the release; if this machine was too slow for that, the round is
 * repeated with a longer deadline. `owed`: default mode, where the head
 * gathers only once it has waited about 1 ms. */
static void timed_out_large_head_wakes_the_waiters_behind_it(park_sem_t *s, bool owed)
{
    for (uint64_t ns = 50 * MS;; ns *= 2) {
        ASSERT_LT(ns, 60000 * (uint64_t)MS);
        struct many large;
        test_threads_t *tl = queue_many(&large, s, 3, park_deadline_in(ns));
        if (owed)
            test_sleep_ns(3 * MS); /* choreography: the large waiter is owed */
        struct acquirer a[2];
        test_threads_t *t[2];
        queue_acquirers(s, a, t, 2, NULL);
        ASSERT_EQ(park_sem_release(s, 2), 0);
        /* All three still queued: the two went to the head. */
        bool gathered = park__wait_count(s) == 3 && !atomic_load(&a[0].done);
        test_threads_join(tl);
        ASSERT_EQ(large.result, ETIMEDOUT);
        join_all(t, 2); /* woken by the permits the head gave back */
        ASSERT_EQ(park_sem_count(s), 0);
        ASSERT_EQ(park__wait_count(s), 0);
        if (gathered)
            break;
    }
    ASSERT_EQ(park_sem_release(s, 4), 0);
    ASSERT_EQ(park_sem_count(s), 4);
    ASSERT_EQ(park_sem_destroy(s), 0);
}

TEST(sem_fifo_timed_out_large_head_wakes_the_waiters_behind_it)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 4);
    timed_out_large_head_wakes_the_waiters_behind_it(&s, false);
}

TEST(sem_default_timed_out_large_head_wakes_the_waiters_behind_it)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    timed_out_large_head_wakes_the_waiters_behind_it(&s, true);
}

/* FIFO: the permits a timed-out head gathered as it queued go back too. */
TEST(sem_fifo_timed_out_large_waiter_gives_back_what_it_gathered_as_it_queued)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(2, 4);
    ASSERT_EQ(park_sem_acquire_n_until(&s, 3, park_deadline_in(5 * MS)), ETIMEDOUT);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park__wait_count(&s), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(sem_init_fifo_rejects_what_init_rejects_and_changes_nothing),
    TEST_ENTRY(sem_init_fifo_makes_a_fifo_semaphore),
    TEST_ENTRY(sem_default_hands_a_released_permit_to_a_waiter_older_than_1ms),
    TEST_ENTRY(sem_default_hands_off_to_an_old_waiter_while_a_woken_one_is_on_its_way),
    TEST_ENTRY(sem_default_release_of_more_permits_than_waiters_leaves_them_free),
    TEST_ENTRY(sem_size_is_at_most_32_bytes),
    TEST_ENTRY(sem_static_initializer_sets_count_and_max),
    TEST_ENTRY(sem_init_sets_count_and_max),
    TEST_ENTRY(sem_init_accepts_zero_initial_and_initial_equal_to_max),
    TEST_ENTRY(sem_init_accepts_value_max),
    TEST_ENTRY(sem_init_with_max_zero_is_einval_and_changes_nothing),
    TEST_ENTRY(sem_init_with_initial_above_max_is_einval_and_changes_nothing),
    TEST_ENTRY(sem_init_with_max_above_value_max_is_einval_and_changes_nothing),
    TEST_ENTRY(sem_try_acquire_takes_permits_until_none_remain),
    TEST_ENTRY(sem_acquire_takes_a_free_permit),
    TEST_ENTRY(sem_acquire_until_past_deadline_takes_a_free_permit),
    TEST_ENTRY(sem_acquire_until_past_deadline_on_an_empty_sem_times_out_and_keeps_count),
    TEST_ENTRY(sem_acquire_until_near_deadline_times_out_not_before_it),
    TEST_ENTRY(sem_acquire_until_takes_a_permit_released_before_the_deadline),
    TEST_ENTRY(sem_acquire_until_forever_takes_a_free_permit),
    TEST_ENTRY(sem_acquire_until_forever_waits_for_a_release),
    TEST_ENTRY(sem_release_zero_is_einval_and_keeps_count),
    TEST_ENTRY(sem_release_zero_with_waiters_is_einval_and_grants_nothing),
    TEST_ENTRY(sem_release_beyond_max_fails_and_keeps_count),
    TEST_ENTRY(sem_release_beyond_max_with_waiters_fails_and_grants_nothing),
    TEST_ENTRY(sem_fifo_release_n_wakes_exactly_n_of_m_waiters),
    TEST_ENTRY(sem_release_beyond_the_waiters_grants_all_and_counts_the_rest),
    TEST_ENTRY(sem_fifo_waiters_are_granted_in_arrival_order),
    TEST_ENTRY(sem_fifo_try_acquire_fails_while_waiters_are_queued),
    TEST_ENTRY(sem_fifo_acquire_until_does_not_take_a_permit_handed_to_a_waiter),
    TEST_ENTRY(sem_destroy_without_waiters_returns_zero),
    TEST_ENTRY(sem_destroy_of_null_returns_zero),
    TEST_ENTRY(sem_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable),
    TEST_ENTRY(sem_count_reports_free_permits),
    TEST_ENTRY(sem_fifo_count_is_zero_while_waiters_are_queued),
    TEST_ENTRY(sem_timed_out_waiter_behind_another_leaves_it_and_the_count_intact),
    TEST_ENTRY(sem_timed_out_waiter_ahead_of_another_leaves_it_and_the_count_intact),
    TEST_ENTRY(sem_never_admits_more_holders_than_permits),
    TEST_ENTRY(sem_acquire_n_of_zero_or_beyond_max_is_einval_at_once_and_takes_nothing),
    TEST_ENTRY(sem_try_acquire_n_of_zero_or_beyond_max_fails_and_takes_nothing),
    TEST_ENTRY(sem_try_acquire_n_takes_all_or_nothing),
    TEST_ENTRY(sem_acquire_n_takes_free_permits_even_past_its_deadline),
    TEST_ENTRY(sem_acquire_n_blocks_until_n_are_free),
    TEST_ENTRY(sem_fifo_acquire_n_blocks_until_n_are_free),
    TEST_ENTRY(sem_acquire_n_of_one_takes_one_permit_as_acquire_does),
    TEST_ENTRY(sem_fifo_large_head_holds_back_smaller_waiters_behind_it),
    TEST_ENTRY(sem_fifo_large_waiter_gathers_the_free_permits_as_it_queues),
    TEST_ENTRY(sem_default_smaller_waiter_passes_a_larger_one_that_is_not_owed),
    TEST_ENTRY(sem_default_passed_larger_waiter_makes_the_fair_look_due_once_it_is_owed),
    TEST_ENTRY(sem_default_owed_larger_waiter_gathers_permits_and_holds_back_smaller_ones),
    TEST_ENTRY(sem_fifo_timed_out_large_head_wakes_the_waiters_behind_it),
    TEST_ENTRY(sem_default_timed_out_large_head_wakes_the_waiters_behind_it),
    TEST_ENTRY(sem_fifo_timed_out_large_waiter_gives_back_what_it_gathered_as_it_queued),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
