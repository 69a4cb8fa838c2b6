/* tests/stress/event_stress.c: park_event under racing threads and tasks.
 *
 * Oracles (tests/TESTING.md, conservation under races): an auto-reset set
 * racing a waiter's deadline, or the cancel of an asynchronous waiter, is
 * consumed by that waiter (its wait returns 0) or stays in the event,
 * exactly one of the two, counted over 10^4 races; a manual set releases
 * every waiter it found queued, even with a reset racing right behind it;
 * two threads passing the turn back and forth through two auto events
 * lose no set (a lost one hangs the pair, and the watchdog fails the
 * test). Loops are bounded by iteration counts (PARK_STRESS_SCALE) and by
 * the watchdog. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "wait/wait.h" /* white box: park__wait_count */

#include "test.h"

#define WINDOW_NS (60u * US) /* deadlines and sets fall in this window */

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

/* Waits (yielding, not sleeping: nanosleep overshoots by tens of us) until
 * the clock reaches t. Choreography only. */
static void spin_until(park_time_t t)
{
    while (park_now() < t)
        sched_yield();
}

/* ---- auto set racing a timed-out waiter --------------------------------------- */

struct race {
    park_event_t e;
    pthread_barrier_t begin, end;
    uint64_t rounds;
    park_time_t start; /* of the round; written before `begin` */
    park_time_t deadline;
    int result; /* the waiter's */
};

static void *race_waiter_main(void *arg)
{
    struct race *r = arg;
    for (uint64_t i = 0; i < r->rounds; i++) {
        pthread_barrier_wait(&r->begin);
        r->result = park_event_wait_until(&r->e, r->deadline);
        if (r->result == ETIMEDOUT)
            ASSERT_GE(park_now(), r->deadline);
        else
            ASSERT_EQ(r->result, 0);
        pthread_barrier_wait(&r->end);
    }
    return NULL;
}

TEST(event_auto_set_racing_a_timed_out_waiter_is_consumed_once_or_stays)
{
    struct race r;
    memset(&r, 0, sizeof r);
    r.rounds = test_scaled(10000);
    ASSERT_EQ(pthread_barrier_init(&r.begin, NULL, 2), 0);
    ASSERT_EQ(pthread_barrier_init(&r.end, NULL, 2), 0);
    test_threads_t *t = test_threads_start(1, race_waiter_main, &r, 0);
    uint64_t rng = test_rng_seed(1), consumed = 0, stayed = 0;
    for (uint64_t i = 0; i < r.rounds; i++) {
        park_event_init(&r.e, false, false);
        r.start = park_now();
        r.deadline = r.start + test_rng_below(&rng, WINDOW_NS);
        pthread_barrier_wait(&r.begin);
        spin_until(r.start + test_rng_below(&rng, WINDOW_NS));
        park_event_set(&r.e);
        pthread_barrier_wait(&r.end);
        bool left = park_event_is_set(&r.e);
        if (r.result == 0)
            ASSERT_FALSE(left); /* consumed once: not left in the event too */
        else
            ASSERT_TRUE(left); /* not consumed: it stayed */
        ASSERT_EQ(park__wait_count(&r.e), 0);
        ASSERT_EQ(park_event_destroy(&r.e), 0);
        consumed += r.result == 0;
        stayed += left;
    }
    test_threads_join(t);
    printf("     %" PRIu64 " races: %" PRIu64 " sets consumed by the waiter, %" PRIu64
           " left in the event\n",
           r.rounds, consumed, stayed);
    pthread_barrier_destroy(&r.begin);
    pthread_barrier_destroy(&r.end);
}

/* ---- auto set racing an asynchronous waiter's cancel, deadline or drop -------- */

/* How the main thread ends an asynchronous wait that a set races. */
enum settle { SETTLE_CANCEL, SETTLE_DEADLINE, SETTLE_DROP, SETTLE_COUNT };

struct async_race {
    park_event_t e;
    pthread_barrier_t begin, end;
    uint64_t rounds;
    park_time_t start;  /* of the round; written before `begin` */
    park_time_t set_at; /* when the setter sets */
};

static void *async_setter_main(void *arg)
{
    struct async_race *r = arg;
    for (uint64_t i = 0; i < r->rounds; i++) {
        pthread_barrier_wait(&r->begin);
        spin_until(r->set_at);
        park_event_set(&r->e);
        pthread_barrier_wait(&r->end);
    }
    return NULL;
}

TEST(event_auto_set_racing_an_async_waiters_cancel_deadline_or_drop_is_consumed_once_or_stays)
{
    park_pool_t *pool = pool_new(1);
    struct async_race r;
    memset(&r, 0, sizeof r);
    r.rounds = test_scaled(10000);
    ASSERT_EQ(pthread_barrier_init(&r.begin, NULL, 2), 0);
    ASSERT_EQ(pthread_barrier_init(&r.end, NULL, 2), 0);
    test_threads_t *setter = test_threads_start(1, async_setter_main, &r, 0);
    uint64_t rng = test_rng_seed(2), consumed = 0, stayed = 0, dropped = 0;
    for (uint64_t i = 0; i < r.rounds; i++) {
        park_event_init(&r.e, false, false);
        enum settle how = (enum settle)test_rng_below(&rng, SETTLE_COUNT);
        r.start = park_now();
        r.set_at = r.start + test_rng_below(&rng, WINDOW_NS);
        park_time_t end_at = r.start + test_rng_below(&rng, WINDOW_NS);
        park_task_t *t = how == SETTLE_DEADLINE ? park_event_wait_async_until(&r.e, pool, end_at)
                                                : park_event_wait_async(&r.e, pool);
        ASSERT_TRUE(t != NULL);
        pthread_barrier_wait(&r.begin);
        int err = -1;
        if (how == SETTLE_CANCEL) {
            spin_until(end_at);
            int rc = park_task_cancel(t);
            err = park_task_wait(t, NULL);
            ASSERT_EQ(err, rc == 0 ? ECANCELED : 0); /* EALREADY: the set is the task's */
        } else if (how == SETTLE_DEADLINE) {
            err = park_task_wait(t, NULL);
            if (err == ETIMEDOUT)
                ASSERT_GE(park_now(), end_at);
            else
                ASSERT_EQ(err, 0);
        } else {
            spin_until(end_at);
            park_task_release(t); /* unseen: a set it got goes back */
            t = NULL;
        }
        pthread_barrier_wait(&r.end);
        if (t)
            park_task_release(t);
        bool left = park_event_is_set(&r.e);
        if (err == 0)
            ASSERT_FALSE(left);
        else
            ASSERT_TRUE(left); /* cancelled, timed out or dropped: the set stayed */
        ASSERT_EQ(park__wait_count(&r.e), 0);
        ASSERT_EQ(park_event_destroy(&r.e), 0);
        consumed += err == 0;
        stayed += left && how != SETTLE_DROP;
        dropped += how == SETTLE_DROP;
    }
    test_threads_join(setter);
    printf("     %" PRIu64 " races: %" PRIu64 " sets consumed by the task, %" PRIu64
           " left in the event by a cancel or deadline, %" PRIu64 " drops\n",
           r.rounds, consumed, stayed, dropped);
    pthread_barrier_destroy(&r.begin);
    pthread_barrier_destroy(&r.end);
    park_pool_destroy(pool);
}

/* ---- manual set racing reset --------------------------------------------------- */

#define MR_WAITERS 6

struct manual_race {
    park_event_t e;
    pthread_barrier_t begin;
    uint64_t rounds;
    park_pool_t *pool;
    atomic_uint passed; /* waiters through this round */
};

struct manual_waiter {
    struct manual_race *r;
    unsigned id;
};

/* Each round: wait once (blocking, timed with a far deadline, or as a
 * task), then count itself through. */
static void *manual_waiter_main(void *arg)
{
    struct manual_waiter *w = arg;
    struct manual_race *r = w->r;
    for (uint64_t i = 0; i < r->rounds; i++) {
        pthread_barrier_wait(&r->begin);
        switch ((w->id + i) % 3) {
        case 0:
            park_event_wait(&r->e);
            break;
        case 1:
            ASSERT_EQ(park_event_wait_until(&r->e, park_deadline_in(HANG_NS)), 0);
            break;
        default: {
            park_task_t *t = park_event_wait_async(&r->e, r->pool);
            ASSERT_TRUE(t != NULL);
            ASSERT_EQ(park_task_wait(t, NULL), 0);
            park_task_release(t);
        }
        }
        atomic_fetch_add(&r->passed, 1);
    }
    return NULL;
}

/* Every round the waiters queue (seen in the wait queue), then one set and
 * a reset right behind it, from two threads at random offsets: every
 * waiter the set found must pass, whatever the reset does. */
TEST(event_manual_set_racing_a_reset_releases_every_waiter_it_found)
{
    struct manual_race r;
    memset(&r, 0, sizeof r);
    r.rounds = test_scaled(1000);
    r.pool = pool_new(1);
    park_event_init(&r.e, true, false);
    ASSERT_EQ(pthread_barrier_init(&r.begin, NULL, MR_WAITERS + 1), 0);
    struct manual_waiter w[MR_WAITERS];
    for (unsigned i = 0; i < MR_WAITERS; i++)
        w[i] = (struct manual_waiter){&r, i};
    test_threads_t *t = test_threads_start(MR_WAITERS, manual_waiter_main, w, sizeof w[0]);
    uint64_t rng = test_rng_seed(3);
    for (uint64_t i = 0; i < r.rounds; i++) {
        atomic_store(&r.passed, 0);
        park_event_reset(&r.e);
        pthread_barrier_wait(&r.begin);
        AWAIT(park__wait_count(&r.e) == MR_WAITERS);
        park_event_set(&r.e);
        for (volatile uint32_t k = test_rng_below(&rng, 200); k > 0; k--) {
        }
        park_event_reset(&r.e);
        AWAIT(atomic_load(&r.passed) == MR_WAITERS);
        ASSERT_EQ(park__wait_count(&r.e), 0);
    }
    test_threads_join(t);
    ASSERT_EQ(park_event_destroy(&r.e), 0);
    pthread_barrier_destroy(&r.begin);
    park_pool_destroy(r.pool);
}

/* ---- ping-pong through two auto events ------------------------------------------ */

struct ping {
    park_event_t to[2]; /* to[i]: the turn of player i */
    uint64_t turns;
    uint64_t count; /* plain: only the player whose turn it is writes it */
};

struct player {
    struct ping *p;
    unsigned id;
};

static void *player_main(void *arg)
{
    struct player *pl = arg;
    struct ping *p = pl->p;
    uint64_t rng = test_rng_seed(10 + pl->id);
    for (uint64_t i = 0; i < p->turns; i++) {
        /* Blocking, timed or try-then-wait: each consumes one set. */
        switch (test_rng_below(&rng, 3)) {
        case 0:
            park_event_wait(&p->to[pl->id]);
            break;
        case 1:
            while (park_event_wait_until(&p->to[pl->id], park_deadline_in(20 * US)) == ETIMEDOUT) {
            }
            break;
        default:
            while (!park_event_try_wait(&p->to[pl->id]))
                sched_yield();
        }
        ASSERT_EQ(p->count % 2, pl->id); /* the set ordered the other's write */
        p->count++;
        park_event_set(&p->to[1 - pl->id]);
    }
    return NULL;
}

TEST(event_auto_ping_pong_between_two_threads_loses_no_set)
{
    struct ping p;
    memset(&p, 0, sizeof p);
    p.turns = test_scaled(20000);
    park_event_init(&p.to[0], false, true);
    park_event_init(&p.to[1], false, false);
    struct player pl[2] = {{&p, 0}, {&p, 1}};
    test_threads_t *t = test_threads_start(2, player_main, pl, sizeof pl[0]);
    test_threads_join(t);
    ASSERT_EQ(p.count, 2 * p.turns);
    ASSERT_TRUE(park_event_is_set(&p.to[0])); /* the last turn passed back */
    ASSERT_FALSE(park_event_is_set(&p.to[1]));
}

static const test_case_t tests[] = {
    TEST_ENTRY(event_auto_set_racing_a_timed_out_waiter_is_consumed_once_or_stays),
    TEST_ENTRY(
        event_auto_set_racing_an_async_waiters_cancel_deadline_or_drop_is_consumed_once_or_stays),
    TEST_ENTRY(event_manual_set_racing_a_reset_releases_every_waiter_it_found),
    TEST_ENTRY(event_auto_ping_pong_between_two_threads_loses_no_set),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
