/* tests/unit/wait_test.c: lib/wait, white-box.
 *
 * Waiters are threads parked in park__wait on plain keys; their ops count
 * calls, so "waiter i is queued" is observed (validate returned true under
 * the bucket lock, hence the enqueue is visible to the next bucket-lock
 * holder) and waiters queue in a known order without sleeps. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <park/time.h>

#include "os/os.h"
#include "wait/spin.h"
#include "wait/wait.h"

#include "test.h"

/* The ops' context: what validate answers, and what the callbacks saw. */
struct ops_ctx {
    atomic_bool invalid;
    atomic_int validations;
    atomic_int removals;
    atomic_int last_more; /* removed's `more` of the last removal; -1: none */
};

static bool ctx_validate(void *ctx)
{
    struct ops_ctx *c = ctx;
    atomic_fetch_add(&c->validations, 1);
    return !atomic_load(&c->invalid);
}

static void ctx_removed(void *ctx, bool more)
{
    struct ops_ctx *c = ctx;
    atomic_store(&c->last_more, more);
    atomic_fetch_add(&c->removals, 1);
}

static const park__wait_ops_t ctx_ops = {ctx_validate, ctx_removed, NULL};

#define OPS_CTX_INIT                                                                               \
    {                                                                                              \
        false, 0, 0, -1                                                                            \
    }

/* A thread parked in park__wait(key, &w, flags, ...) until deadline. */
struct waiter {
    const void *key;
    uintptr_t want;
    unsigned flags;
    park_time_t deadline;
    struct ops_ctx *ctx;
    void (*notify)(park__waiter_t *w);
    _Atomic uint8_t *adapt; /* w.adapt */
    park__waiter_t w;
    int result;
    park_time_t returned_at;
    atomic_bool done;
};

static void *waiter_main(void *arg)
{
    struct waiter *wt = arg;
    park__waiter_init(&wt->w, wt->want);
    wt->w.notify = wt->notify;
    wt->w.adapt = wt->adapt;
    wt->result = park__wait(wt->key, &wt->w, wt->flags, &ctx_ops, wt->ctx, wt->deadline);
    wt->returned_at = park_now();
    atomic_store(&wt->done, true);
    return NULL;
}

/* Starts a waiter and returns once it is queued. */
static test_threads_t *enqueue(struct waiter *wt)
{
    int before = atomic_load(&wt->ctx->validations);
    test_threads_t *t = test_threads_start(1, waiter_main, wt, sizeof *wt);
    AWAIT(atomic_load(&wt->ctx->validations) == before + 1);
    return t;
}

static struct waiter waiter_on(const void *key, uintptr_t want, struct ops_ctx *ctx)
{
    return (struct waiter){.key = key, .want = want, .deadline = PARK_FOREVER, .ctx = ctx};
}

/* What one park__unpark call showed its callbacks. */
struct unpark_log {
    park__waiter_t *seen[16];
    uintptr_t wants[16];
    size_t nseen;
    int finishes;
    bool more;
    size_t seen_at_finish;
    park__waiter_t *target; /* select_target grants this one */
};

static void log_seen(struct unpark_log *log, park__waiter_t *w)
{
    if (log->nseen == 16)
        test_fail(__FILE__, __LINE__, "select called too often");
    log->wants[log->nseen] = w->want;
    log->seen[log->nseen++] = w;
}

static unsigned select_skip(void *ctx, park__waiter_t *w)
{
    log_seen(ctx, w);
    return PARK__SELECT_SKIP;
}

static unsigned select_stop(void *ctx, park__waiter_t *w)
{
    log_seen(ctx, w);
    return PARK__SELECT_STOP;
}

/* Grants, with grant = want + 100 so the waiter can tell it was this one. */
static unsigned select_grant_all(void *ctx, park__waiter_t *w)
{
    log_seen(ctx, w);
    w->grant = w->want + 100;
    return PARK__SELECT_GRANT;
}

static unsigned select_grant_first(void *ctx, park__waiter_t *w)
{
    log_seen(ctx, w);
    w->grant = w->want + 100;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static unsigned select_target(void *ctx, park__waiter_t *w)
{
    struct unpark_log *log = ctx;
    log_seen(log, w);
    if (w != log->target)
        return PARK__SELECT_SKIP;
    w->grant = w->want + 100;
    return PARK__SELECT_GRANT;
}

static unsigned select_never(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    (void)w;
    test_fail(__FILE__, __LINE__, "select shown a waiter of another key");
}

static void log_finish(void *ctx, bool more)
{
    struct unpark_log *log = ctx;
    log->finishes++;
    log->more = more;
    log->seen_at_finish = log->nseen;
}

/* The waiters queued on key, oldest first (via a select that skips all). */
static size_t queued_on(const void *key, struct unpark_log *log)
{
    memset(log, 0, sizeof *log);
    ASSERT_EQ(park__unpark(key, select_skip, log_finish, log), 0);
    return log->nseen;
}

static void assert_granted(struct waiter *wt, test_threads_t *t)
{
    test_threads_join(t);
    ASSERT_EQ(wt->result, PARK__WAIT_GRANTED);
    ASSERT_EQ(wt->w.grant, wt->want + 100);
    ASSERT_FALSE(wt->w.queued);
}

/* Distinct keys, 4 bytes apart (the table hashes addresses >> 2). */
static uint32_t keys[2048];

TEST(wait_validate_false_returns_invalid_without_enqueueing)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    atomic_store(&ctx.invalid, true);
    park__waiter_t w;
    park__waiter_init(&w, 1);
    /* A deadline, so that a wrong enqueue shows as TIMEDOUT, not a hang. */
    ASSERT_EQ(park__wait(&keys[0], &w, 0, &ctx_ops, &ctx, park_deadline_in(5 * MS)),
              PARK__WAIT_INVALID);
    ASSERT_EQ(atomic_load(&ctx.validations), 1);
    ASSERT_EQ(atomic_load(&ctx.removals), 0);
    ASSERT_FALSE(w.queued);
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
    struct unpark_log log;
    ASSERT_EQ(queued_on(&keys[0], &log), 0);
}

TEST(wait_has_waiters_tells_whether_a_key_has_queued_waiters)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
    struct waiter a = waiter_on(&keys[0], 1, &ctx);
    test_threads_t *t = enqueue(&a);
    ASSERT_TRUE(park__wait_has_waiters(&keys[0]));
    ASSERT_FALSE(park__wait_has_waiters(&keys[1]));
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 1);
    assert_granted(&a, t);
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
}

TEST(wait_unpark_shows_waiters_oldest_first)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[3];
    test_threads_t *t[3];
    for (int i = 0; i < 3; i++) {
        wt[i] = waiter_on(&keys[0], (uintptr_t)i, &ctx);
        t[i] = enqueue(&wt[i]);
    }
    struct unpark_log log;
    ASSERT_EQ(queued_on(&keys[0], &log), 3);
    for (int i = 0; i < 3; i++) {
        ASSERT_TRUE(log.seen[i] == &wt[i].w);
        ASSERT_EQ(log.wants[i], i);
    }
    ASSERT_EQ(log.finishes, 1);
    ASSERT_EQ(log.seen_at_finish, 3);
    ASSERT_TRUE(log.more);
    for (int i = 0; i < 3; i++)
        ASSERT_FALSE(atomic_load(&wt[i].done));

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 3);
    for (int i = 0; i < 3; i++)
        assert_granted(&wt[i], t[i]);
}

TEST(wait_unpark_grants_the_head_and_reports_more_waiters)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[3];
    test_threads_t *t[3];
    for (int i = 0; i < 3; i++) {
        wt[i] = waiter_on(&keys[0], (uintptr_t)i, &ctx);
        t[i] = enqueue(&wt[i]);
    }
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_grant_first, log_finish, &log), 1);
    ASSERT_EQ(log.nseen, 1);
    ASSERT_TRUE(log.seen[0] == &wt[0].w);
    ASSERT_EQ(log.finishes, 1);
    ASSERT_TRUE(log.more);
    assert_granted(&wt[0], t[0]);

    ASSERT_EQ(queued_on(&keys[0], &log), 2);
    ASSERT_TRUE(log.seen[0] == &wt[1].w);
    ASSERT_TRUE(log.seen[1] == &wt[2].w);

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_first, log_finish, &log), 1);
    ASSERT_TRUE(log.seen[0] == &wt[1].w);
    ASSERT_TRUE(log.more);
    assert_granted(&wt[1], t[1]);

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_first, log_finish, &log), 1);
    ASSERT_TRUE(log.seen[0] == &wt[2].w);
    ASSERT_FALSE(log.more);
    assert_granted(&wt[2], t[2]);
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
}

TEST(wait_unpark_granting_every_waiter_reports_no_more)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[3];
    test_threads_t *t[3];
    for (int i = 0; i < 3; i++) {
        wt[i] = waiter_on(&keys[0], (uintptr_t)i, &ctx);
        t[i] = enqueue(&wt[i]);
    }
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 3);
    ASSERT_EQ(log.nseen, 3);
    for (int i = 0; i < 3; i++)
        ASSERT_TRUE(log.seen[i] == &wt[i].w);
    ASSERT_EQ(log.finishes, 1);
    ASSERT_EQ(log.seen_at_finish, 3);
    ASSERT_FALSE(log.more);
    for (int i = 0; i < 3; i++)
        assert_granted(&wt[i], t[i]);
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
}

TEST(wait_unpark_may_skip_a_waiter_and_grant_a_later_one)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[3];
    test_threads_t *t[3];
    for (int i = 0; i < 3; i++) {
        wt[i] = waiter_on(&keys[0], (uintptr_t)i, &ctx);
        t[i] = enqueue(&wt[i]);
    }
    struct unpark_log log = {.target = &wt[1].w};
    ASSERT_EQ(park__unpark(&keys[0], select_target, log_finish, &log), 1);
    ASSERT_EQ(log.nseen, 3);
    ASSERT_TRUE(log.more);
    assert_granted(&wt[1], t[1]);
    ASSERT_FALSE(atomic_load(&wt[0].done));
    ASSERT_FALSE(atomic_load(&wt[2].done));

    ASSERT_EQ(queued_on(&keys[0], &log), 2);
    ASSERT_TRUE(log.seen[0] == &wt[0].w);
    ASSERT_TRUE(log.seen[1] == &wt[2].w);

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 2);
    assert_granted(&wt[0], t[0]);
    assert_granted(&wt[2], t[2]);
}

TEST(wait_unpark_stop_without_grant_leaves_the_queue_and_reports_more)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[2];
    test_threads_t *t[2];
    for (int i = 0; i < 2; i++) {
        wt[i] = waiter_on(&keys[0], (uintptr_t)i, &ctx);
        t[i] = enqueue(&wt[i]);
    }
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_stop, log_finish, &log), 0);
    ASSERT_EQ(log.nseen, 1);
    ASSERT_TRUE(log.seen[0] == &wt[0].w);
    ASSERT_EQ(log.finishes, 1);
    ASSERT_TRUE(log.more);
    ASSERT_EQ(queued_on(&keys[0], &log), 2);

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 2);
    assert_granted(&wt[0], t[0]);
    assert_granted(&wt[1], t[1]);
}

TEST(wait_unpark_without_waiters_only_calls_finish_with_no_more)
{
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_never, log_finish, &log), 0);
    ASSERT_EQ(log.finishes, 1);
    ASSERT_FALSE(log.more);
}

TEST(wait_front_flag_puts_a_waiter_ahead_of_the_others)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[3];
    test_threads_t *t[3];
    for (int i = 0; i < 3; i++) {
        wt[i] = waiter_on(&keys[0], (uintptr_t)i, &ctx);
        wt[i].flags = i == 2 ? PARK__WAIT_FRONT : 0;
        t[i] = enqueue(&wt[i]);
    }
    struct unpark_log log;
    ASSERT_EQ(queued_on(&keys[0], &log), 3);
    ASSERT_TRUE(log.seen[0] == &wt[2].w);
    ASSERT_TRUE(log.seen[1] == &wt[0].w);
    ASSERT_TRUE(log.seen[2] == &wt[1].w);

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_first, log_finish, &log), 1);
    assert_granted(&wt[2], t[2]);
    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 2);
    assert_granted(&wt[0], t[0]);
    assert_granted(&wt[1], t[1]);
}

TEST(wait_timed_out_waiter_is_removed_and_told_no_more_when_alone)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    park__waiter_t w;
    park__waiter_init(&w, 1);
    park_time_t deadline = park_deadline_in(10 * MS);
    ASSERT_EQ(park__wait(&keys[0], &w, 0, &ctx_ops, &ctx, deadline), PARK__WAIT_TIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    ASSERT_EQ(atomic_load(&ctx.last_more), false);
    ASSERT_FALSE(w.queued);
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
}

TEST(wait_timed_out_waiter_is_removed_and_told_more_when_others_remain)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter a = waiter_on(&keys[0], 1, &ctx);
    test_threads_t *t = enqueue(&a);
    park__waiter_t w;
    park__waiter_init(&w, 2);
    park_time_t deadline = park_deadline_in(10 * MS);
    ASSERT_EQ(park__wait(&keys[0], &w, 0, &ctx_ops, &ctx, deadline), PARK__WAIT_TIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    ASSERT_EQ(atomic_load(&ctx.last_more), true);
    ASSERT_FALSE(w.queued);

    struct unpark_log log;
    ASSERT_EQ(queued_on(&keys[0], &log), 1);
    ASSERT_TRUE(log.seen[0] == &a.w);
    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 1);
    assert_granted(&a, t);
}

TEST(wait_cancel_of_a_dequeued_waiter_returns_false)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter a = waiter_on(&keys[0], 1, &ctx);
    test_threads_t *t = enqueue(&a);
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 1);
    /* Dequeued: the cancel must lose, before and after the waiter ran. */
    ASSERT_FALSE(park__wait_cancel(&keys[0], &a.w, ctx_removed, &ctx));
    assert_granted(&a, t);
    ASSERT_FALSE(park__wait_cancel(&keys[0], &a.w, ctx_removed, &ctx));
    ASSERT_EQ(atomic_load(&ctx.removals), 0);
    ASSERT_EQ(a.w.grant, a.want + 100);
}

TEST(wait_cancel_of_a_never_queued_waiter_returns_false)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    park__waiter_t w;
    park__waiter_init(&w, 1);
    ASSERT_FALSE(park__wait_cancel(&keys[0], &w, ctx_removed, &ctx));
    ASSERT_EQ(atomic_load(&ctx.removals), 0);
}

/* A queued waiter is taken out by cancel. The thread that queued it keeps
 * sleeping on its node (thread waiters are only cancelled by their own
 * timeout), so the test then wakes it by hand. */
TEST(wait_cancel_of_a_queued_waiter_removes_it)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[2];
    test_threads_t *t[2];
    for (int i = 0; i < 2; i++) {
        wt[i] = waiter_on(&keys[0], (uintptr_t)i, &ctx);
        t[i] = enqueue(&wt[i]);
    }
    ASSERT_TRUE(park__wait_cancel(&keys[0], &wt[1].w, ctx_removed, &ctx));
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    ASSERT_EQ(atomic_load(&ctx.last_more), true);
    ASSERT_FALSE(wt[1].w.queued);
    ASSERT_TRUE(park__wait_cancel(&keys[0], &wt[0].w, ctx_removed, &ctx));
    ASSERT_EQ(atomic_load(&ctx.removals), 2);
    ASSERT_EQ(atomic_load(&ctx.last_more), false);
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_never, log_finish, &log), 0);
    ASSERT_FALSE(log.more);
    ASSERT_FALSE(atomic_load(&wt[0].done));

    for (int i = 0; i < 2; i++) {
        atomic_store(&wt[i].w.woken, 1);
        park__futex_wake((uint32_t *)&wt[i].w.woken, 1);
        test_threads_join(t[i]);
    }
}

/* Two keys that the table puts in one bucket. The hash is copied from
 * lib/wait/queue.c to pick them; if it changes, the keys merely stop
 * colliding (the many-keys test below does not rely on it). */
static unsigned bucket_guess(const void *key)
{
    uint64_t h = ((uint64_t)(uintptr_t)key >> 2) * 0x9e3779b97f4a7c15u;
    return (unsigned)(h >> (64 - 9));
}

static void colliding_keys(const void **a, const void **b)
{
    for (size_t i = 1; i < sizeof keys / sizeof keys[0]; i++) {
        if (bucket_guess(&keys[i]) == bucket_guess(&keys[0])) {
            *a = &keys[0];
            *b = &keys[i];
            return;
        }
    }
    test_fail(__FILE__, __LINE__, "no key shares keys[0]'s bucket");
}

TEST(wait_keys_sharing_a_bucket_do_not_see_each_others_waiters)
{
    const void *ka, *kb;
    colliding_keys(&ka, &kb);
    struct ops_ctx ctx_a = OPS_CTX_INIT, ctx_b = OPS_CTX_INIT;
    struct waiter a = waiter_on(ka, 1, &ctx_a);
    test_threads_t *ta = enqueue(&a);

    ASSERT_FALSE(park__wait_has_waiters(kb));
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(kb, select_never, log_finish, &log), 0);
    ASSERT_FALSE(log.more);

    /* A waiter of kb timing out is alone on its key. */
    park__waiter_t w;
    park__waiter_init(&w, 2);
    ASSERT_EQ(park__wait(kb, &w, 0, &ctx_ops, &ctx_b, park_deadline_in(5 * MS)),
              PARK__WAIT_TIMEDOUT);
    ASSERT_EQ(atomic_load(&ctx_b.removals), 1);
    ASSERT_EQ(atomic_load(&ctx_b.last_more), false);

    /* One of kb ahead of ka's waiter is not shown to ka's unpark. */
    struct waiter b = waiter_on(kb, 3, &ctx_b);
    b.flags = PARK__WAIT_FRONT;
    test_threads_t *tb = enqueue(&b);
    ASSERT_EQ(queued_on(ka, &log), 1);
    ASSERT_TRUE(log.seen[0] == &a.w);
    ASSERT_EQ(queued_on(kb, &log), 1);
    ASSERT_TRUE(log.seen[0] == &b.w);

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(ka, select_grant_all, log_finish, &log), 1);
    ASSERT_FALSE(log.more);
    assert_granted(&a, ta);
    ASSERT_FALSE(atomic_load(&b.done));
    ASSERT_FALSE(park__wait_has_waiters(ka));
    ASSERT_TRUE(park__wait_has_waiters(kb));
    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(kb, select_grant_all, log_finish, &log), 1);
    assert_granted(&b, tb);
}

/* Batch waiters sleep on their bucket's shared word: an unpark that grants
 * several wakes them all (one system call), and a batch waiter of another
 * key in the same bucket, woken with them, goes back to sleep. */
TEST(wait_batch_waiters_are_all_woken_and_another_keys_sleeps_on)
{
    enum { N = 4 };
    const void *ka, *kb;
    colliding_keys(&ka, &kb);
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[N], other = waiter_on(kb, 9, &ctx);
    test_threads_t *t[N];
    other.flags = PARK__WAIT_BATCH;
    test_threads_t *to = enqueue(&other);
    for (int i = 0; i < N; i++) {
        wt[i] = waiter_on(ka, (uintptr_t)i, &ctx);
        wt[i].flags = PARK__WAIT_BATCH;
        t[i] = enqueue(&wt[i]);
    }
    test_sleep_ns(5 * MS); /* choreography: let them fall asleep */
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(ka, select_grant_all, log_finish, &log), N);
    for (int i = 0; i < N; i++)
        assert_granted(&wt[i], t[i]);
    test_sleep_ns(5 * MS); /* a wrongly returning waiter would show */
    ASSERT_FALSE(atomic_load(&other.done));
    ASSERT_TRUE(park__wait_has_waiters(kb));
    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(kb, select_grant_all, log_finish, &log), 1);
    assert_granted(&other, to);
}

/* A batch waiter whose deadline passes leaves like any other. */
TEST(wait_batch_waiter_times_out_and_is_removed)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    park__waiter_t w;
    park__waiter_init(&w, 1);
    ASSERT_EQ(park__wait(&keys[7], &w, PARK__WAIT_BATCH, &ctx_ops, &ctx, park_deadline_in(3 * MS)),
              PARK__WAIT_TIMEDOUT);
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    ASSERT_FALSE(park__wait_has_waiters(&keys[7]));
}

/* More keys than the table has buckets, so some share one whatever the
 * hash: each key's unpark sees its own waiter or none. */
TEST(wait_unpark_of_each_key_grants_only_that_keys_waiters)
{
    enum { WAITERS = 8, KEYS = sizeof keys / sizeof keys[0], STRIDE = 251 };
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter wt[WAITERS];
    test_threads_t *t[WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        wt[i] = waiter_on(&keys[i * STRIDE], (uintptr_t)i, &ctx);
        t[i] = enqueue(&wt[i]);
    }
    for (size_t k = 0; k < KEYS; k++) {
        if (k % STRIDE == 0 && k / STRIDE < WAITERS) {
            ASSERT_TRUE(park__wait_has_waiters(&keys[k]));
            continue;
        }
        ASSERT_FALSE(park__wait_has_waiters(&keys[k]));
        struct unpark_log log = {0};
        ASSERT_EQ(park__unpark(&keys[k], select_never, log_finish, &log), 0);
        ASSERT_EQ(log.finishes, 1);
        ASSERT_FALSE(log.more);
    }
    for (int i = 0; i < WAITERS; i++) {
        struct unpark_log log = {.target = &wt[i].w};
        ASSERT_EQ(park__unpark(&keys[i * STRIDE], select_target, log_finish, &log), 1);
        ASSERT_EQ(log.nseen, 1);
        ASSERT_FALSE(log.more);
        assert_granted(&wt[i], t[i]);
    }
}

/* A notify waiter: the unparking thread calls notify instead of setting
 * `woken`. notify checks the queue of the same key, which takes the bucket
 * lock (it would hang, and the watchdog fail the test, if unpark still held
 * it), then lets the parked test thread go by hand. */
static struct {
    const void *key;
    atomic_int calls;
    atomic_int woken_seen;
    atomic_bool key_had_waiters;
    pthread_t thread;
} notified;

static void on_notify(park__waiter_t *w)
{
    notified.woken_seen = atomic_load(&w->woken);
    notified.key_had_waiters = park__wait_has_waiters(notified.key);
    notified.thread = pthread_self();
    atomic_fetch_add(&notified.calls, 1);
    atomic_store(&w->woken, 1);
    park__futex_wake((uint32_t *)&w->woken, 1);
}

TEST(wait_notify_waiter_is_notified_after_the_bucket_lock_is_released)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    notified.key = &keys[0];
    struct waiter n = waiter_on(&keys[0], 1, &ctx);
    n.notify = on_notify;
    test_threads_t *tn = enqueue(&n);
    struct waiter other = waiter_on(&keys[0], 2, &ctx);
    test_threads_t *to = enqueue(&other);

    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_grant_first, log_finish, &log), 1);
    ASSERT_TRUE(log.seen[0] == &n.w);
    ASSERT_TRUE(log.more);
    /* Notified once, by the unparking thread, within the unpark call, and
     * not through its futex word. */
    ASSERT_EQ(atomic_load(&notified.calls), 1);
    ASSERT_TRUE(pthread_equal(notified.thread, pthread_self()));
    ASSERT_TRUE(atomic_load(&notified.woken_seen) != 1); /* awake (0) or asleep (2) */
    ASSERT_TRUE(atomic_load(&notified.key_had_waiters)); /* `other` */
    assert_granted(&n, tn);

    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[0], select_grant_all, log_finish, &log), 1);
    assert_granted(&other, to);
    ASSERT_EQ(atomic_load(&notified.calls), 1);
}

/* ---- deferred grants, two-step waits, the system clock, cancellation ---- */

/* Grants the first waiter and defers the others. */
static unsigned select_first_wake_others_defer(void *ctx, park__waiter_t *w)
{
    struct unpark_log *log = ctx;
    log_seen(log, w);
    w->grant = w->want + 100;
    return log->nseen == 1 ? PARK__SELECT_GRANT : PARK__SELECT_GRANT | PARK__SELECT_DEFER;
}

TEST(wait_deferred_waiter_is_dequeued_but_sleeps_past_its_deadline_until_woken)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct waiter a = waiter_on(&keys[0], 1, &ctx);
    test_threads_t *ta = enqueue(&a);
    struct waiter b = waiter_on(&keys[0], 2, &ctx);
    b.deadline = park_deadline_in(10 * MS);
    test_threads_t *tb = enqueue(&b);

    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[0], select_first_wake_others_defer, log_finish, &log), 2);
    ASSERT_FALSE(log.more);
    ASSERT_FALSE(park__wait_has_waiters(&keys[0]));
    assert_granted(&a, ta);
    /* b is off the queue, so its deadline cannot take it out: it waits for
     * the wake it is owed. */
    test_sleep_ns(50 * MS);
    ASSERT_FALSE(atomic_load(&b.done));
    ASSERT_FALSE(b.w.queued);
    park__wake(&b.w);
    assert_granted(&b, tb);
    ASSERT_EQ(atomic_load(&ctx.removals), 0);
}

/* A thread waiter queued with park__wait_enqueue, then put to sleep. */
struct two_step {
    struct ops_ctx *ctx;
    park__waiter_t w;
    atomic_bool queued;
    park_time_t deadline;
    int result;
};

static void *two_step_main(void *arg)
{
    struct two_step *ts = arg;
    park__waiter_init(&ts->w, 7);
    if (park__wait_enqueue(&keys[1], &ts->w, 0, &ctx_ops, ts->ctx) != PARK__WAIT_QUEUED)
        test_fail(__FILE__, __LINE__, "a thread waiter was not queued");
    atomic_store(&ts->queued, true);
    ts->result = park__wait_sleep(&keys[1], &ts->w, 0, &ctx_ops, ts->ctx, ts->deadline);
    return NULL;
}

TEST(wait_enqueue_then_sleep_is_granted_or_times_out_and_leaves)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct two_step ts = {.ctx = &ctx, .deadline = PARK_FOREVER};
    test_threads_t *t = test_threads_start(1, two_step_main, &ts, sizeof ts);
    AWAIT(atomic_load(&ts.queued));
    ASSERT_TRUE(park__wait_has_waiters(&keys[1]));
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[1], select_grant_all, log_finish, &log), 1);
    test_threads_join(t);
    ASSERT_EQ(ts.result, PARK__WAIT_GRANTED);
    ASSERT_EQ(ts.w.grant, 107);

    struct two_step late = {.ctx = &ctx, .deadline = park_deadline_in(10 * MS)};
    t = test_threads_start(1, two_step_main, &late, sizeof late);
    test_threads_join(t);
    ASSERT_EQ(late.result, PARK__WAIT_TIMEDOUT);
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    ASSERT_FALSE(park__wait_has_waiters(&keys[1]));
}

TEST(wait_leave_takes_a_queued_waiter_out_or_keeps_its_grant)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    park__waiter_t w;
    park__waiter_init(&w, 3);
    ASSERT_EQ(park__wait_enqueue(&keys[2], &w, 0, &ctx_ops, &ctx), PARK__WAIT_QUEUED);
    ASSERT_FALSE(park__wait_leave(&keys[2], &w, ctx_removed, &ctx));
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    ASSERT_FALSE(park__wait_has_waiters(&keys[2]));

    park__waiter_init(&w, 4);
    ASSERT_EQ(park__wait_enqueue(&keys[2], &w, 0, &ctx_ops, &ctx), PARK__WAIT_QUEUED);
    struct unpark_log log = {0};
    ASSERT_EQ(park__unpark(&keys[2], select_grant_all, log_finish, &log), 1);
    ASSERT_TRUE(park__wait_leave(&keys[2], &w, ctx_removed, &ctx));
    ASSERT_EQ(w.grant, 104);
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
}

TEST(wait_realtime_deadline_is_on_the_system_clock)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    park__waiter_t w;
    park__waiter_init(&w, 1);
    park_time_t deadline = park__os_realtime_now() + 10 * MS;
    park_time_t t0 = park_now();
    ASSERT_EQ(park__wait(&keys[3], &w, PARK__WAIT_REALTIME, &ctx_ops, &ctx, deadline),
              PARK__WAIT_TIMEDOUT);
    ASSERT_GE(park__os_realtime_now(), deadline);
    ASSERT_LT(park_now() - t0, HANG_NS);
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    /* Before the epoch: passed already. */
    park__waiter_init(&w, 1);
    ASSERT_EQ(park__wait(&keys[3], &w, PARK__WAIT_REALTIME, &ctx_ops, &ctx, 0),
              PARK__WAIT_TIMEDOUT);
}

/* A thread cancelled in its sleep: its cleanup handler leaves the queue. */
struct cancelled {
    struct ops_ctx *ctx;
    park__waiter_t w;
    atomic_bool queued;
    int left_granted; /* park__wait_leave's answer, from the cleanup handler */
};

static void cancelled_cleanup(void *arg)
{
    struct cancelled *c = arg;
    c->left_granted = park__wait_leave(&keys[4], &c->w, ctx_removed, c->ctx);
}

static void *cancelled_main(void *arg)
{
    struct cancelled *c = arg;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    park__waiter_init(&c->w, 5);
    park__wait_enqueue(&keys[4], &c->w, 0, &ctx_ops, c->ctx);
    atomic_store(&c->queued, true);
    pthread_cleanup_push(cancelled_cleanup, c);
    park__wait_sleep(&keys[4], &c->w, PARK__WAIT_CANCEL, &ctx_ops, c->ctx, PARK_FOREVER);
    pthread_cleanup_pop(0);
    return NULL;
}

TEST(wait_cancel_flag_makes_the_sleep_a_cancellation_point)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    struct cancelled c = {.ctx = &ctx, .left_granted = -1};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, cancelled_main, &c), 0);
    AWAIT(atomic_load(&c.queued));
    test_sleep_ns(10 * MS); /* asleep, or about to be: both are cancellable */
    ASSERT_EQ(pthread_cancel(t), 0);
    void *ret;
    ASSERT_EQ(pthread_join(t, &ret), 0);
    ASSERT_TRUE(ret == PTHREAD_CANCELED);
    ASSERT_EQ(c.left_granted, 0);
    ASSERT_EQ(atomic_load(&ctx.removals), 1);
    ASSERT_FALSE(park__wait_has_waiters(&keys[4]));
}

/* Steps through a spin schedule: how many steps said "look again", and
 * the pauses spent before each look (0 for a yield). */
static int spin_steps(park__spin_t s, uint32_t *pauses_per_look, int max)
{
    int n = 0;
    for (;;) {
        uint32_t before = s.pauses;
        if (!park__spin(&s))
            return n;
        if (n < max)
            pauses_per_look[n] = before - s.pauses;
        n++;
    }
}

TEST(spin_every_looks_at_a_fixed_gap_then_yields)
{
    uint32_t gaps[16];
    bool one = park__os_single_cpu(); /* no pauses on one CPU */
    int n = spin_steps(park__spin_init_every(128, 512, 2), gaps, 16);
    ASSERT_EQ(n, one ? 2 : 6);
    for (int i = 0; i < n; i++)
        ASSERT_EQ(gaps[i], (!one && i < 4) ? 128u : 0u);
    n = spin_steps(park__spin_init_once(128, 4), gaps, 16);
    ASSERT_EQ(n, one ? 4 : 5);
    for (int i = 0; i < n; i++)
        ASSERT_EQ(gaps[i], (!one && i == 0) ? 128u : 0u);
    /* the usual schedule's gap doubles: 1, 2, 4, 8, 16, then the rest */
    n = spin_steps(park__spin_init(40, 0), gaps, 16);
    ASSERT_EQ(n, one ? 0 : 6);
    if (!one) {
        const uint32_t want[] = {1, 2, 4, 8, 16, 9};
        for (int i = 0; i < 6; i++)
            ASSERT_EQ(gaps[i], want[i]);
    }
    /* a zero gap looks after every pause */
    n = spin_steps(park__spin_init_every(0, 3, 0), gaps, 16);
    ASSERT_EQ(n, one ? 0 : 3);
}

TEST(spin_jitter_draws_budgets_around_the_mean)
{
    bool one = park__os_single_cpu(); /* no pauses on one CPU */
    uint32_t lo = UINT32_MAX, hi = 0;
    uint64_t sum = 0;
    for (int i = 0; i < 64; i++) {
        park__spin_t s = park__spin_init_jitter(512, 4, 1);
        ASSERT_EQ(s.yields, 4u);
        ASSERT_EQ(s.max_gap, 1u);
        if (one) {
            ASSERT_EQ(s.pauses, 0u);
            continue;
        }
        ASSERT_GE(s.pauses, 256u);
        ASSERT_LT(s.pauses, 768u);
        lo = s.pauses < lo ? s.pauses : lo;
        hi = s.pauses > hi ? s.pauses : hi;
        sum += s.pauses;
    }
    if (!one) {
        /* 64 uniform draws over 512 values: a spread under 128 has odds
         * below 1e-30, a mean 128 away from 512 (7 standard deviations)
         * below 1e-11. */
        ASSERT_GE(hi - lo, 128u);
        ASSERT_GE(sum / 64, 384u);
        ASSERT_LE(sum / 64, 640u);
    }
    ASSERT_EQ(park__spin_init_jitter(0, 2, 1).pauses, 0u);
}

/* The early schedule of a thread of its own (its per-thread state fresh):
 * looks after 8, 24, 56 and 120 pauses, no yields; none on one CPU. */
static void *early_shape_main(void *arg)
{
    park__spin_t s = park__spin_init_early();
    ASSERT_EQ(s.max_gap, PARK__SPIN_EARLY_GAP); /* the early schedule, not the empty one */
    uint32_t gaps[8];
    int looks = spin_steps(s, gaps, 8);
    if (park__os_single_cpu()) {
        ASSERT_EQ(looks, 0);
    } else {
        ASSERT_EQ(looks, 4);
        ASSERT_EQ(gaps[0], 8u);
        ASSERT_EQ(gaps[1], 16u);
        ASSERT_EQ(gaps[2], 32u);
        ASSERT_EQ(gaps[3], 64u);
    }
    (void)arg;
    return NULL;
}

TEST(spin_early_schedule_looks_after_8_24_56_and_120_pauses)
{
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, early_shape_main, NULL), 0);
    ASSERT_EQ(pthread_join(t, NULL), 0);
}

/* In a thread of its own: whether each of n early schedules was the early
 * one (not the empty one), with park__spin_note(now - back[i], pauses)
 * called before schedule i where back[i] is not 0. */
struct early_probe {
    int n;
    uint64_t back[PARK__SPIN_EARLY_OFF + 8];
    bool early[PARK__SPIN_EARLY_OFF + 8];
};

static void *early_main(void *arg)
{
    struct early_probe *p = arg;
    for (int i = 0; i < p->n; i++) {
        if (p->back[i])
            park__spin_note(park__os_ticks() - p->back[i], 128);
        p->early[i] = park__spin_init_early().max_gap == PARK__SPIN_EARLY_GAP;
    }
    return NULL;
}

TEST(spin_early_looks_are_off_for_a_while_after_a_crowded_spin)
{
    /* The bound leaves room for any processor's pauses. */
    uint64_t us = park__os_ticks_per_us();
    ASSERT_GE(park__spin_crowded_ticks(0), PARK__SPIN_CROWDED_US * us);
    ASSERT_GE(park__spin_crowded_ticks(384), park__spin_crowded_ticks(128) + 25 * us);
    /* A spin just begun (or a clock step back) changes nothing; one as long
     * as the bound turns the early looks off for PARK__SPIN_EARLY_OFF
     * schedules, and then they come back. */
    struct early_probe crowded = {.n = PARK__SPIN_EARLY_OFF + 8};
    crowded.back[1] = 1;
    crowded.back[2] = (uint64_t)0 - 1000 * us; /* 1 ms in the future */
    crowded.back[4] = park__spin_crowded_ticks(128);
    struct early_probe calm = {.n = PARK__SPIN_EARLY_OFF + 8};
    calm.back[1] = 1;
    pthread_t a, b;
    ASSERT_EQ(pthread_create(&a, NULL, early_main, &crowded), 0);
    ASSERT_EQ(pthread_create(&b, NULL, early_main, &calm), 0);
    ASSERT_EQ(pthread_join(a, NULL), 0);
    ASSERT_EQ(pthread_join(b, NULL), 0);
    for (int i = 0; i < crowded.n; i++) {
        bool off = i >= 4 && i < 4 + (int)PARK__SPIN_EARLY_OFF;
        ASSERT_EQ(crowded.early[i], !off);
        /* Another thread's crowding is not this one's. */
        ASSERT_TRUE(calm.early[i]);
    }
}

/* Two park__spin_rare spins in a fresh thread (the early looks' state is
 * per thread), each a 512-pause rest looking every 128, 128 trimmed after
 * the early looks. The look counts its calls, returns `result` at call
 * `stop` of the first spin (0: never), and at call `slow` takes
 * park__spin_crowded_ticks(512) and more, longer than any spin's pauses
 * could. */
struct rare_probe {
    int calls, stop, slow, result;
    int ret;         /* the first spin's result */
    int looks_first; /* its looks */
    int looks_next;  /* the second spin's looks */
};

static int rare_look(void *arg)
{
    struct rare_probe *p = arg;
    p->calls++;
    if (p->calls == p->slow) {
        uint64_t end = park__os_ticks() + park__spin_crowded_ticks(512) + park__os_ticks_per_us();
        while (park__os_ticks() < end)
            park__os_pause();
    }
    return p->calls == p->stop ? p->result : 0;
}

static void *rare_main(void *arg)
{
    struct rare_probe *p = arg;
    p->ret = park__spin_rare(park__spin_init_every(128, 512, 0), 128, rare_look, p);
    p->looks_first = p->calls;
    p->stop = 0;
    (void)park__spin_rare(park__spin_init_every(128, 512, 0), 128, rare_look, p);
    p->looks_next = p->calls - p->looks_first;
    return NULL;
}

/* Runs the probe in a fresh thread until its second spin had the early
 * looks (looks_next == 7), at most 20 times: a thread preempted during the
 * first spin's rest took it as crowded, as it should, and turned them off
 * (4 looks); a spin that never keeps them on fails. */
static void rare_run(struct rare_probe *p, bool want_early_next)
{
    struct rare_probe fresh = *p;
    for (int i = 0; i < 20; i++) {
        *p = fresh;
        pthread_t t;
        ASSERT_EQ(pthread_create(&t, NULL, rare_main, p), 0);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        if (!want_early_next || p->looks_next == 7)
            return;
    }
}

TEST(spin_rare_runs_the_early_looks_then_the_rest_less_its_trim)
{
    /* Nothing found: 4 early looks, then 384 of the 512 pauses, looking
     * every 128, 7 looks; no pauses, so no looks, on one CPU. */
    bool one = park__os_single_cpu();
    struct rare_probe p = {0};
    rare_run(&p, !one);
    ASSERT_EQ(p.ret, 0);
    ASSERT_EQ(p.looks_first, one ? 0 : 7);
    ASSERT_EQ(p.looks_next, one ? 0 : 7);
}

TEST(spin_rare_ends_at_a_looks_result)
{
    if (park__os_single_cpu())
        return; /* no looks */
    /* Early (the second early look) or late (the second rare look). */
    struct rare_probe early = {.stop = 2, .result = -1};
    rare_run(&early, false);
    ASSERT_EQ(early.ret, -1);
    ASSERT_EQ(early.looks_first, 2);
    struct rare_probe late = {.stop = 6, .result = 1};
    rare_run(&late, false);
    ASSERT_EQ(late.ret, 1);
    ASSERT_EQ(late.looks_first, 6);
}

TEST(spin_rare_turns_the_early_looks_off_after_a_crowded_rest_not_a_slow_early_look)
{
    if (park__os_single_cpu())
        return; /* no looks */
    /* A slow look in the rest (the first rare look): the next spin is the
     * 512 pauses alone, 4 looks. */
    struct rare_probe rest = {.slow = 5};
    rare_run(&rest, false);
    ASSERT_EQ(rest.looks_first, 7);
    ASSERT_EQ(rest.looks_next, 4);
    /* A slow early look is not timed: the early looks stay on. */
    struct rare_probe early = {.slow = 2};
    rare_run(&early, true);
    ASSERT_EQ(early.looks_first, 7);
    ASSERT_EQ(early.looks_next, 7);
}

TEST(wait_waiting_counts_the_threads_between_enter_and_leave)
{
    static int key;                      /* only its address matters */
    uint32_t base = park__waiting(&key); /* other keys of the bucket: none */
    ASSERT_EQ(park__waiting_enter(&key), base);
    ASSERT_EQ(park__waiting(&key), base + 1);
    ASSERT_EQ(park__waiting_enter(&key), base + 1);
    ASSERT_EQ(park__waiting(&key), base + 2);
    park__waiting_leave(&key);
    ASSERT_EQ(park__waiting(&key), base + 1);
    park__waiting_leave(&key);
    ASSERT_EQ(park__waiting(&key), base);
}

/* A thread that lowers its own weight (how: 0 leaves it as loaded, 1 sets
 * nice 19, 2 SCHED_IDLE), then steps through a schedule of 4 yields and
 * 20 rounds of park__spin_forever past its budget. */
struct weight_probe {
    int how;
    int nice;  /* its nice value after the change */
    bool set;  /* the change was allowed */
    bool low;  /* park__os_low_weight() */
    int looks; /* steps of the 4-yield schedule that said "look again" */
    long naps; /* voluntary context switches over the 20 rounds */
    bool errno_kept;
};

static void *weight_main(void *arg)
{
    struct weight_probe *p = arg;
    if (p->how == 1) {
        p->set = setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) == 0;
    } else if (p->how == 2) {
        struct sched_param sp = {0};
        p->set = sched_setscheduler(0, SCHED_IDLE, &sp) == 0;
    } else {
        p->set = true;
    }
    p->nice = getpriority(PRIO_PROCESS, 0);
    errno = EDOM; /* the looks, yields and naps leave errno alone */
    p->low = park__os_low_weight();
    uint32_t gaps[8];
    p->looks = spin_steps(park__spin_init(0, 4), gaps, 8);
    struct rusage a, b;
    getrusage(RUSAGE_THREAD, &a);
    park__spin_t s = park__spin_init(0, 0);
    for (int i = 0; i < 20; i++)
        park__spin_forever(&s);
    getrusage(RUSAGE_THREAD, &b);
    p->naps = b.ru_nvcsw - a.ru_nvcsw;
    p->errno_kept = errno == EDOM;
    return NULL;
}

static struct weight_probe probe_weight(int how)
{
    struct weight_probe p = {.how = how};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, weight_main, &p), 0);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_TRUE(p.set);
    ASSERT_TRUE(p.errno_kept);
    return p;
}

TEST(spin_thread_of_low_weight_sleeps_where_others_yield)
{
    /* New threads start at the weight of this one, which loaded park. A
     * yield is counted as an involuntary switch (when it switches at
     * all), a sleep as a voluntary one. */
    int base = getpriority(PRIO_PROCESS, 0);
    bool idle_base = sched_getscheduler(0) == SCHED_IDLE; /* nice counts for nothing then */
    struct weight_probe p = probe_weight(0);
    ASSERT_FALSE(p.low);
    ASSERT_EQ(p.looks, 4);
    ASSERT_LE(p.naps, 5);

    /* nice 19: no yields in the schedule, naps where there is nothing to
     * sleep on. Most naps are switches (one that ends before the thread
     * gets to sleep is not). Unless this process already runs at 19. */
    p = probe_weight(1);
    bool lower = p.nice > base && !idle_base;
    ASSERT_EQ(p.low, lower);
    if (lower) {
        ASSERT_EQ(p.looks, 0);
        ASSERT_GE(p.naps, 10);
    }

    /* SCHED_IDLE, unless this process already runs so. */
    p = probe_weight(2);
    ASSERT_EQ(p.low, !idle_base);
    if (!idle_base) {
        ASSERT_EQ(p.looks, 0);
        ASSERT_GE(p.naps, 10);
    }
}

/* Dozes for 300 ms (again after an early end: a fault or a signal) with
 * its timer slack set to `slack` first; records its slack after. */
struct doze_probe {
    unsigned long slack, after;
    pid_t tid;
    atomic_bool started, done;
    bool errno_kept;
};

static void *doze_main(void *arg)
{
    struct doze_probe *p = arg;
    prctl(PR_SET_TIMERSLACK, p->slack, 0, 0, 0);
    p->tid = (pid_t)syscall(SYS_gettid);
    atomic_store(&p->started, true);
    park_time_t until = park_now() + 300 * MS;
    errno = EDOM;
    while (park_now() < until)
        park__wait_doze(until);
    p->errno_kept = errno == EDOM;
    p->after = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    atomic_store(&p->done, true);
    return NULL;
}

/* The smallest timer slack a dozing thread showed while it dozed. */
static unsigned long slack_while_dozing(struct doze_probe *p)
{
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, doze_main, p), 0);
    while (!atomic_load(&p->started))
        sched_yield();
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/timerslack_ns", (int)p->tid); /* a thread's too */
    unsigned long least = ULONG_MAX;
    while (!atomic_load(&p->done)) {
        FILE *f = fopen(path, "r");
        unsigned long v;
        if (f && fscanf(f, "%lu", &v) == 1 && v < least)
            least = v;
        if (f)
            fclose(f);
        test_sleep_ns(MS);
    }
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_TRUE(p->errno_kept);
    return least;
}

TEST(wait_doze_sleeps_with_a_timer_slack_of_1us_and_puts_the_threads_back)
{
    /* The default slack (50 us) is lowered for the doze, then restored. */
    struct doze_probe p = {.slack = 50000};
    ASSERT_EQ(slack_while_dozing(&p), 1000u);
    ASSERT_EQ(p.after, 50000u);
    /* A slack already below 1 us is left as it is. */
    struct doze_probe q = {.slack = 500};
    ASSERT_EQ(slack_while_dozing(&q), 500u);
    ASSERT_EQ(q.after, 500u);
}

static void *draw_four(void *arg)
{
    uint32_t *out = arg;
    for (int i = 0; i < 4; i++)
        out[i] = park__spin_random();
    return NULL;
}

TEST(spin_random_differs_between_threads)
{
    /* Neither is joined before both have run, so their thread-local
     * states (and so their seeds) have different addresses. */
    uint32_t a[4], b[4];
    pthread_t ta, tb;
    ASSERT_EQ(pthread_create(&ta, NULL, draw_four, a), 0);
    ASSERT_EQ(pthread_create(&tb, NULL, draw_four, b), 0);
    ASSERT_EQ(pthread_join(ta, NULL), 0);
    ASSERT_EQ(pthread_join(tb, NULL), 0);
    ASSERT_TRUE(memcmp(a, b, sizeof a) != 0);
}

TEST(wait_adapt_doubles_after_a_short_sleep_and_halves_after_a_long_one_within_bounds)
{
    /* Granted soon after falling asleep: more yields would have caught it. */
    ASSERT_EQ(park__wait_adapt(4, 0, true), 8);
    ASSERT_EQ(park__wait_adapt(8, PARK__ADAPT_SHORT_NS - 1, true), 16);
    ASSERT_EQ(park__wait_adapt(48, 1000, true), PARK__ADAPT_MAX);
    ASSERT_EQ(park__wait_adapt(PARK__ADAPT_MAX, 1000, true), PARK__ADAPT_MAX);
    /* Granted late, or not at all: the yields were spent for nothing. */
    ASSERT_EQ(park__wait_adapt(64, PARK__ADAPT_SHORT_NS, true), 32);
    ASSERT_EQ(park__wait_adapt(32, 1000, false), 16);
    ASSERT_EQ(park__wait_adapt(6, 10 * MS, true), PARK__ADAPT_MIN);
    ASSERT_EQ(park__wait_adapt(PARK__ADAPT_MIN, 10 * MS, true), PARK__ADAPT_MIN);
}

TEST(wait_adaptive_budget_halves_when_a_waiter_times_out_asleep)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    _Atomic uint8_t budget = 32;
    park__waiter_t w;
    park__waiter_init(&w, 1);
    w.adapt = &budget;
    ASSERT_EQ(park__wait(&keys[5], &w, 0, &ctx_ops, &ctx, park_deadline_in(5 * MS)),
              PARK__WAIT_TIMEDOUT);
    ASSERT_EQ(atomic_load(&budget), 16);
    /* Not below the floor. */
    atomic_store(&budget, PARK__ADAPT_MIN);
    ASSERT_EQ(park__wait(&keys[5], &w, 0, &ctx_ops, &ctx, park_deadline_in(5 * MS)),
              PARK__WAIT_TIMEDOUT);
    ASSERT_EQ(atomic_load(&budget), PARK__ADAPT_MIN);
}

/* Lowers its own weight (SCHED_IDLE), then times out asleep in a wait
 * with the adaptive budget at arg. */
static void *low_weight_timeout_main(void *arg)
{
    struct sched_param sp = {0};
    if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0)
        return (void *)1;
    struct ops_ctx ctx = OPS_CTX_INIT;
    park__waiter_t w;
    park__waiter_init(&w, 1);
    w.adapt = arg;
    int r = park__wait(&keys[6], &w, 0, &ctx_ops, &ctx, park_deadline_in(5 * MS));
    return r == PARK__WAIT_TIMEDOUT ? NULL : (void *)2;
}

TEST(wait_adaptive_budget_is_left_alone_by_a_thread_of_low_weight)
{
    /* It skipped its yields (park__os_yield), so its sleep says nothing
     * about them: the budget, which threads of normal weight share, stays
     * (a thread of normal weight halves it: the test above). Unless this
     * process already runs SCHED_IDLE, when the thread is not lower. */
    bool idle_base = sched_getscheduler(0) == SCHED_IDLE;
    _Atomic uint8_t budget = 32;
    pthread_t t;
    void *r;
    ASSERT_EQ(pthread_create(&t, NULL, low_weight_timeout_main, &budget), 0);
    ASSERT_EQ(pthread_join(t, &r), 0);
    ASSERT_TRUE(r == NULL);
    ASSERT_EQ(atomic_load(&budget), idle_base ? 16 : 32);
}

/* Spins until told to stop: on the test's CPU, each yield of a waiter
 * there switches to it. */
static void *busy_main(void *arg)
{
    atomic_bool *stop = arg;
    while (!atomic_load_explicit(stop, memory_order_relaxed))
        park__os_pause();
    return NULL;
}

static long involuntary_switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nivcsw;
}

TEST(wait_timed_waiter_stops_yielding_once_its_deadline_has_passed)
{
    /* This thread and a busy one share one CPU, so every yield is a switch
     * (counted, not timed). With its deadline passed, a waiter with a full
     * yield budget yields at most once before it times out, not 64 times:
     * with more threads than CPUs each yield may give away a time slice. */
    cpu_set_t saved, one;
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof saved, &saved), 0);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &saved))
        cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    atomic_bool stop = false;
    pthread_t busy;
    ASSERT_EQ(pthread_create(&busy, NULL, busy_main, &stop), 0);
    ASSERT_EQ(pthread_setaffinity_np(busy, sizeof one, &one), 0);

    struct ops_ctx ctx = OPS_CTX_INIT;
    _Atomic uint8_t budget = PARK__ADAPT_MAX;
    park__waiter_t w;
    park__waiter_init(&w, 1);
    w.adapt = &budget;
    long before = involuntary_switches();
    int r = park__wait(&keys[8], &w, 0, &ctx_ops, &ctx, park_now() - 1);
    long switches = involuntary_switches() - before;

    /* The busy thread stops, and this one gets its CPUs back, before any
     * assertion can end the test. */
    atomic_store(&stop, true);
    pthread_join(busy, NULL);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof saved, &saved), 0);
    ASSERT_EQ(r, PARK__WAIT_TIMEDOUT);
    ASSERT_LT(switches, 8);
    ASSERT_FALSE(park__wait_has_waiters(&keys[8]));
}

TEST(wait_adaptive_budget_halves_when_the_grant_comes_long_after_the_sleep)
{
    struct ops_ctx ctx = OPS_CTX_INIT;
    _Atomic uint8_t budget = 16;
    struct waiter wt = waiter_on(&keys[6], 1, &ctx);
    wt.adapt = &budget;
    test_threads_t *t = enqueue(&wt);
    AWAIT(park__wait_first_asleep(&keys[6]));
    /* Asleep for at least 2 ms before the grant: a long sleep. */
    test_sleep_ns(2 * MS);
    struct unpark_log log;
    memset(&log, 0, sizeof log);
    ASSERT_EQ(park__unpark(&keys[6], select_grant_first, log_finish, &log), 1);
    assert_granted(&wt, t);
    ASSERT_EQ(atomic_load(&budget), 8);
}

/* The fairness clocks of lib/wait, at a clock of our choosing (far ahead of
 * anything another test set): a waiter that has waited PARK__FAIR_NS is
 * owed, but a bucket owes at most one paced hand-off per PARK__FAIR_NS;
 * an unpaced waiter (a semaphore's waiter of several, which gathers) is owed
 * whatever the bucket's last hand-off, unless the test hold is on. The
 * owed checks are meant for select callbacks under the bucket lock; here
 * nothing else uses the key's bucket. */
TEST(wait_owed_unpaced_ignores_the_buckets_last_fair_hand_off)
{
    static int key;
    park__waiter_t first, second, young;
    park__waiter_init(&first, 1);
    park__waiter_init(&second, 32);
    park__waiter_init(&young, 32);
    first.key = second.key = young.key = &key;
    park_time_t now = park_now() + 1000000000u;
    first.since = second.since = now - 2u * PARK__FAIR_NS;
    young.since = now - PARK__FAIR_NS / 2u;

    park_time_t clock = now;
    ASSERT_TRUE(park__wait_owed(&first, &clock));
    ASSERT_FALSE(park__wait_owed(&second, &clock)); /* paced: the bucket just handed off */
    ASSERT_TRUE(park__wait_owed_unpaced(&second, &clock));
    ASSERT_FALSE(park__wait_owed_unpaced(&young, &clock)); /* has not waited long enough */
    /* An unpaced hand-off does not move the bucket's pacing: a release's fair
     * look (park__wait_fair_due) is not held back for the next one. */
    park_time_t after = now + PARK__FAIR_NS;
    ASSERT_TRUE(park__wait_fair_due(&key, after));
    ASSERT_TRUE(park__wait_owed_unpaced(&second, &after));
    ASSERT_TRUE(park__wait_fair_due(&key, after));

    /* The test hold stops both. */
    park__wait_hold_fair(&key, PARK_FOREVER);
    ASSERT_FALSE(park__wait_owed_unpaced(&second, &clock));
    park_time_t later = now + 10u * PARK__FAIR_NS;
    ASSERT_FALSE(park__wait_owed(&first, &later));
    park__wait_hold_fair(&key, 0); /* lifts the hold and the pacing */
    ASSERT_TRUE(park__wait_owed_unpaced(&second, &clock));
}

/* park__wait_fair_due_from: the fair look is due from the time given,
 * whatever the bucket's pacing, until it is lifted (0). As above, at a
 * clock of our choosing, with nothing else using the key's bucket. */
TEST(wait_fair_due_from_makes_the_fair_look_due_whatever_the_pacing)
{
    static int key;
    park__waiter_t first;
    park__waiter_init(&first, 1);
    first.key = &key;
    park_time_t now = park_now() + 2000000000u;
    first.since = now - 2u * PARK__FAIR_NS;
    park_time_t clock = now;
    ASSERT_TRUE(park__wait_owed(&first, &clock)); /* paces the bucket */
    ASSERT_FALSE(park__wait_fair_due(&key, now));
    park__wait_fair_due_from(&key, now + 10);
    ASSERT_FALSE(park__wait_fair_due(&key, now + 9));
    ASSERT_TRUE(park__wait_fair_due(&key, now + 10));
    park__wait_fair_due_from(&key, 0);
    ASSERT_FALSE(park__wait_fair_due(&key, now + 10));
    ASSERT_TRUE(park__wait_fair_due(&key, now + PARK__FAIR_NS)); /* the pacing's own */
}

static const test_case_t tests[] = {
    TEST_ENTRY(wait_validate_false_returns_invalid_without_enqueueing),
    TEST_ENTRY(wait_has_waiters_tells_whether_a_key_has_queued_waiters),
    TEST_ENTRY(wait_unpark_shows_waiters_oldest_first),
    TEST_ENTRY(wait_unpark_grants_the_head_and_reports_more_waiters),
    TEST_ENTRY(wait_unpark_granting_every_waiter_reports_no_more),
    TEST_ENTRY(wait_unpark_may_skip_a_waiter_and_grant_a_later_one),
    TEST_ENTRY(wait_unpark_stop_without_grant_leaves_the_queue_and_reports_more),
    TEST_ENTRY(wait_unpark_without_waiters_only_calls_finish_with_no_more),
    TEST_ENTRY(wait_front_flag_puts_a_waiter_ahead_of_the_others),
    TEST_ENTRY(wait_timed_out_waiter_is_removed_and_told_no_more_when_alone),
    TEST_ENTRY(wait_timed_out_waiter_is_removed_and_told_more_when_others_remain),
    TEST_ENTRY(wait_cancel_of_a_dequeued_waiter_returns_false),
    TEST_ENTRY(wait_cancel_of_a_never_queued_waiter_returns_false),
    TEST_ENTRY(wait_cancel_of_a_queued_waiter_removes_it),
    TEST_ENTRY(wait_keys_sharing_a_bucket_do_not_see_each_others_waiters),
    TEST_ENTRY(wait_batch_waiters_are_all_woken_and_another_keys_sleeps_on),
    TEST_ENTRY(wait_batch_waiter_times_out_and_is_removed),
    TEST_ENTRY(wait_unpark_of_each_key_grants_only_that_keys_waiters),
    TEST_ENTRY(wait_notify_waiter_is_notified_after_the_bucket_lock_is_released),
    TEST_ENTRY(wait_deferred_waiter_is_dequeued_but_sleeps_past_its_deadline_until_woken),
    TEST_ENTRY(wait_enqueue_then_sleep_is_granted_or_times_out_and_leaves),
    TEST_ENTRY(wait_leave_takes_a_queued_waiter_out_or_keeps_its_grant),
    TEST_ENTRY(wait_realtime_deadline_is_on_the_system_clock),
    TEST_ENTRY(wait_cancel_flag_makes_the_sleep_a_cancellation_point),
    TEST_ENTRY(spin_every_looks_at_a_fixed_gap_then_yields),
    TEST_ENTRY(spin_jitter_draws_budgets_around_the_mean),
    TEST_ENTRY(spin_random_differs_between_threads),
    TEST_ENTRY(spin_early_schedule_looks_after_8_24_56_and_120_pauses),
    TEST_ENTRY(spin_early_looks_are_off_for_a_while_after_a_crowded_spin),
    TEST_ENTRY(spin_rare_runs_the_early_looks_then_the_rest_less_its_trim),
    TEST_ENTRY(spin_rare_ends_at_a_looks_result),
    TEST_ENTRY(spin_rare_turns_the_early_looks_off_after_a_crowded_rest_not_a_slow_early_look),
    TEST_ENTRY(wait_waiting_counts_the_threads_between_enter_and_leave),
    TEST_ENTRY(wait_doze_sleeps_with_a_timer_slack_of_1us_and_puts_the_threads_back),
    TEST_ENTRY(spin_thread_of_low_weight_sleeps_where_others_yield),
    TEST_ENTRY(wait_adapt_doubles_after_a_short_sleep_and_halves_after_a_long_one_within_bounds),
    TEST_ENTRY(wait_adaptive_budget_halves_when_a_waiter_times_out_asleep),
    TEST_ENTRY(wait_adaptive_budget_is_left_alone_by_a_thread_of_low_weight),
    TEST_ENTRY(wait_timed_waiter_stops_yielding_once_its_deadline_has_passed),
    TEST_ENTRY(wait_adaptive_budget_halves_when_the_grant_comes_long_after_the_sleep),
    TEST_ENTRY(wait_owed_unpaced_ignores_the_buckets_last_fair_hand_off),
    TEST_ENTRY(wait_fair_due_from_makes_the_fair_look_due_whatever_the_pacing),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
