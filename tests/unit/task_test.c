/* tests/unit/task_test.c: park_task, one behaviour per test.
 *
 * Continuations are checked against a thread-local flag that a test sets
 * around the call that completes a task or registers a continuation: a
 * continuation that ran within that call would see it set. Workers are held
 * by gates (semaphores) when a test needs work to be queued and not yet
 * run, and "park_pool_destroy has begun" is observed by a job on the pool
 * that submits until a submission fails with EPIPE. The only timing
 * asserted is that delays and deadlines are never early. The tests that
 * drop references in unusual orders have no oracle of their own beyond the
 * results they read: AddressSanitizer catches a task freed too early and
 * LeakSanitizer one never freed. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <park/park.h>
#include <park/pool.h>
#include <park/task.h>

#include "test.h"

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

static park_task_t *task_new(void)
{
    park_task_t *t = park_task_new();
    ASSERT_TRUE(t != NULL);
    return t;
}

/* The task's error and result, checked to be final. */
static void assert_completed(park_task_t *t, int err, void *result)
{
    void *r = (void *)&r;
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, &r), err);
    ASSERT_TRUE(r == result);
    ASSERT_EQ(park_task_result(t, NULL), err);
    r = (void *)&r;
    ASSERT_EQ(park_task_wait(t, &r), err);
    ASSERT_TRUE(r == result);
}

static void assert_pending(park_task_t *t)
{
    ASSERT_FALSE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), EINPROGRESS);
}

/* ---- gates: hold a worker until the test opens them ---------------------------- */

struct gate {
    park_sem_t sem;
    atomic_bool held; /* a worker is waiting at the gate */
};

static void gate_hold(void *arg)
{
    struct gate *g = arg;
    atomic_store(&g->held, true);
    park_sem_acquire(&g->sem);
}

/* Occupies a worker of pool until gate_open. */
static void gate_close(struct gate *g, park_pool_t *pool)
{
    ASSERT_EQ(park_sem_init(&g->sem, 0, 1), 0);
    atomic_store(&g->held, false);
    ASSERT_EQ(park_pool_submit(pool, gate_hold, g), 0);
    AWAIT(atomic_load(&g->held));
}

static void gate_open(struct gate *g)
{
    ASSERT_EQ(park_sem_release(&g->sem, 1), 0);
}

/* ---- continuations -------------------------------------------------------------- */

static _Thread_local bool in_call; /* set around a completing or registering call */

struct cont {
    park_pool_t *pool;
    park_task_t *expect;
    int err;
    void *result;
    atomic_int runs;
    park_task_t *keep; /* retained by the continuation when keep_it */
    bool keep_it;
};

static void cont_fn(park_task_t *done, void *arg)
{
    struct cont *c = arg;
    if (in_call)
        test_fail(__FILE__, __LINE__, "a continuation ran within the call that queued it");
    ASSERT_TRUE(park_pool_current() == c->pool);
    if (c->expect)
        ASSERT_TRUE(done == c->expect);
    void *r = NULL;
    c->err = park_task_result(done, &r);
    c->result = r;
    if (c->keep_it)
        c->keep = park_task_retain(done);
    atomic_fetch_add(&c->runs, 1);
}

static void cont_init(struct cont *c, park_pool_t *pool, park_task_t *expect)
{
    memset(c, 0, sizeof *c);
    c->pool = pool;
    c->expect = expect;
}

static void then(park_task_t *t, struct cont *c)
{
    in_call = true;
    ASSERT_EQ(park_task_then(t, c->pool, cont_fn, c), 0);
    in_call = false;
}

static int complete(park_task_t *t, int err, void *result)
{
    in_call = true;
    int rc = park_task_complete(t, err, result);
    in_call = false;
    return rc;
}

static int cancel(park_task_t *t)
{
    in_call = true;
    int rc = park_task_cancel(t);
    in_call = false;
    return rc;
}

/* ---- new, complete, cancel, result ---------------------------------------------- */

TEST(task_new_is_pending)
{
    park_task_t *t = task_new();
    assert_pending(t);
    void *r = &r;
    ASSERT_EQ(park_task_result(t, &r), EINPROGRESS);
    park_task_release(t);
}

TEST(task_release_of_null_does_nothing)
{
    park_task_release(NULL);
}

TEST(task_complete_sets_the_error_and_result)
{
    int token;
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_complete(t, EIO, &token), 0);
    assert_completed(t, EIO, &token);
    park_task_release(t);

    t = task_new();
    ASSERT_EQ(park_task_complete(t, 0, NULL), 0);
    assert_completed(t, 0, NULL);
    park_task_release(t);
}

TEST(task_result_is_einprogress_then_the_error)
{
    int token;
    park_task_t *t = task_new();
    void *r = NULL;
    ASSERT_EQ(park_task_result(t, &r), EINPROGRESS);
    ASSERT_EQ(park_task_complete(t, EPERM, &token), 0);
    ASSERT_EQ(park_task_result(t, &r), EPERM);
    ASSERT_TRUE(r == &token);
    park_task_release(t);
}

TEST(task_complete_twice_is_ealready_and_keeps_the_first)
{
    int first, second;
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_complete(t, 0, &first), 0);
    ASSERT_EQ(park_task_complete(t, EIO, &second), EALREADY);
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    assert_completed(t, 0, &first);
    park_task_release(t);
}

TEST(task_cancel_completes_with_ecanceled)
{
    int token;
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_cancel(t), 0);
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    ASSERT_EQ(park_task_complete(t, 0, &token), EALREADY);
    assert_completed(t, ECANCELED, NULL);
    park_task_release(t);
}

TEST(task_retain_returns_the_task_and_keeps_it_alive)
{
    park_task_t *t = task_new();
    ASSERT_TRUE(park_task_retain(t) == t);
    park_task_release(t);
    ASSERT_EQ(park_task_complete(t, EIO, NULL), 0); /* still alive */
    assert_completed(t, EIO, NULL);
    park_task_release(t);
}

/* Two threads race complete and cancel on one task, many times. Each side
 * spins a random while after the start signal, so either may come first.
 * The loser reads the task as soon as its call returns EALREADY: the task
 * had completed, so the winner's outcome must be there already. */
#define RACES 2000
#define RACE_MAX_SPIN 2000

struct race {
    park_task_t *t;
    atomic_uint round;   /* the racers start round k when it reaches 2k + 1 */
    atomic_uint arrived; /* the canceller adds 1 before and 1 after each round */
    int complete_rc, cancel_rc;
    int cancel_saw; /* park_task_result right after a cancel that lost */
};

static void spin(uint64_t *rng)
{
    for (volatile uint32_t k = test_rng_below(rng, RACE_MAX_SPIN); k > 0; k--) {
    }
}

static void *race_canceller(void *arg)
{
    struct race *r = arg;
    uint64_t rng = test_rng_seed(1);
    for (unsigned k = 0; k < RACES; k++) {
        atomic_fetch_add(&r->arrived, 1);
        for (unsigned n = 0; atomic_load(&r->round) != 2 * k + 1; n++)
            if (n > 1000)
                sched_yield();
        spin(&rng);
        r->cancel_rc = park_task_cancel(r->t);
        if (r->cancel_rc == EALREADY)
            r->cancel_saw = park_task_result(r->t, NULL);
        atomic_fetch_add(&r->arrived, 1);
    }
    return NULL;
}

TEST(task_complete_racing_cancel_completes_exactly_once)
{
    int token;
    struct race r;
    memset(&r, 0, sizeof r);
    uint64_t rng = test_rng_seed(2);
    test_threads_t *th = test_threads_start(1, race_canceller, &r, sizeof r);
    unsigned completed = 0, cancelled = 0;
    for (unsigned k = 0; k < RACES; k++) {
        r.t = task_new();
        while (atomic_load(&r.arrived) < 2 * k + 1) /* the canceller is ready */
            sched_yield();
        atomic_store(&r.round, 2 * k + 1);
        spin(&rng);
        r.complete_rc = park_task_complete(r.t, 0, &token);
        int complete_saw = r.complete_rc == EALREADY ? park_task_result(r.t, NULL) : -1;
        while (atomic_load(&r.arrived) < 2 * k + 2)
            sched_yield();
        if (r.complete_rc == 0) {
            ASSERT_EQ(r.cancel_rc, EALREADY);
            ASSERT_EQ(r.cancel_saw, 0);
            assert_completed(r.t, 0, &token);
            completed++;
        } else {
            ASSERT_EQ(r.complete_rc, EALREADY);
            ASSERT_EQ(r.cancel_rc, 0);
            ASSERT_EQ(complete_saw, ECANCELED);
            assert_completed(r.t, ECANCELED, NULL);
            cancelled++;
        }
        park_task_release(r.t);
    }
    test_threads_join(th);
    printf("     %u won by complete, %u by cancel\n", completed, cancelled);
}

/* ---- continuations -------------------------------------------------------------- */

TEST(task_continuation_runs_on_the_pool_after_completion)
{
    int token;
    park_pool_t *pool = pool_new(2);
    park_task_t *t = task_new();
    struct cont c;
    cont_init(&c, pool, t);
    then(t, &c);
    ASSERT_EQ(complete(t, EIO, &token), 0);
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, EIO);
    ASSERT_TRUE(c.result == &token);
    park_task_release(t);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&c.runs), 1);
}

TEST(task_continuation_never_runs_within_complete)
{
    park_pool_t *pool = pool_new(1);
    for (int k = 0; k < 100; k++) {
        park_task_t *t = task_new();
        struct cont c;
        cont_init(&c, pool, t);
        then(t, &c);
        ASSERT_EQ(complete(t, 0, NULL), 0);
        AWAIT(atomic_load(&c.runs) == 1);
        park_task_release(t);
    }
    park_pool_destroy(pool);
}

TEST(task_continuation_never_runs_within_cancel)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    struct cont c;
    cont_init(&c, pool, t);
    then(t, &c);
    ASSERT_EQ(cancel(t), 0);
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, ECANCELED);
    park_task_release(t);
    park_pool_destroy(pool);
}

/* On a worker, completion queues the continuation on the worker's own deque. */
struct complete_inside {
    park_task_t *t;
    atomic_bool done;
};

static void complete_inside_job(void *arg)
{
    struct complete_inside *ci = arg;
    ASSERT_EQ(complete(ci->t, 0, ci), 0);
    atomic_store(&ci->done, true);
}

TEST(task_continuation_never_runs_within_complete_on_a_worker)
{
    park_pool_t *pool = pool_new(1);
    for (int k = 0; k < 100; k++) {
        struct complete_inside ci = {task_new(), false};
        struct cont c;
        cont_init(&c, pool, ci.t);
        then(ci.t, &c);
        ASSERT_EQ(park_pool_submit(pool, complete_inside_job, &ci), 0);
        AWAIT(atomic_load(&c.runs) == 1);
        ASSERT_TRUE(c.result == &ci);
        park_task_release(ci.t);
    }
    park_pool_destroy(pool);
}

TEST(task_then_on_a_completed_task_runs_the_continuation_later)
{
    int token;
    park_pool_t *pool = pool_new(1);
    for (int k = 0; k < 100; k++) {
        park_task_t *t = task_new();
        ASSERT_EQ(park_task_complete(t, EPERM, &token), 0);
        struct cont c;
        cont_init(&c, pool, t);
        then(t, &c); /* fails if the continuation runs within */
        AWAIT(atomic_load(&c.runs) == 1);
        ASSERT_EQ(c.err, EPERM);
        ASSERT_TRUE(c.result == &token);
        park_task_release(t);
    }
    park_pool_destroy(pool);
}

struct then_inside {
    park_pool_t *pool;
    park_task_t *t;
    struct cont c;
    atomic_bool done;
};

static void then_inside_job(void *arg)
{
    struct then_inside *ti = arg;
    then(ti->t, &ti->c);
    atomic_store(&ti->done, true);
}

TEST(task_then_on_a_completed_task_from_a_worker_runs_the_continuation_later)
{
    park_pool_t *pool = pool_new(1);
    struct then_inside ti;
    memset(&ti, 0, sizeof ti);
    ti.pool = pool;
    ti.t = task_new();
    cont_init(&ti.c, pool, ti.t);
    ASSERT_EQ(park_task_complete(ti.t, 0, &ti), 0);
    ASSERT_EQ(park_pool_submit(pool, then_inside_job, &ti), 0);
    AWAIT(atomic_load(&ti.c.runs) == 1);
    ASSERT_TRUE(atomic_load(&ti.done));
    ASSERT_TRUE(ti.c.result == &ti);
    park_task_release(ti.t);
    park_pool_destroy(pool);
}

/* Completed on a worker of pool a, a continuation meant for pool b runs on b. */
struct cross_cont {
    park_task_t *t;
    struct cont c;
};

static void complete_on_worker(void *arg)
{
    struct cross_cont *x = arg;
    ASSERT_EQ(complete(x->t, 0, x), 0);
}

TEST(task_continuation_for_another_pool_runs_there_when_completed_on_a_worker)
{
    park_pool_t *a = pool_new(1), *b = pool_new(1);
    struct cross_cont x;
    x.t = task_new();
    cont_init(&x.c, b, x.t);
    then(x.t, &x.c);
    ASSERT_EQ(park_pool_submit(a, complete_on_worker, &x), 0);
    AWAIT(atomic_load(&x.c.runs) == 1); /* cont_fn checks the pool */
    ASSERT_TRUE(x.c.result == &x);
    park_task_release(x.t);
    park_pool_destroy(a);
    park_pool_destroy(b);
}

/* A continuation registers another on the (completed) task: queued too. */
struct chain {
    park_pool_t *pool;
    struct cont next;
    atomic_int runs;
};

static void chain_fn(park_task_t *done, void *arg)
{
    struct chain *ch = arg;
    cont_init(&ch->next, ch->pool, done);
    then(done, &ch->next); /* fails if it runs within */
    atomic_fetch_add(&ch->runs, 1);
}

TEST(task_then_within_a_continuation_queues_the_new_one)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    struct chain ch;
    memset(&ch, 0, sizeof ch);
    ch.pool = pool;
    ASSERT_EQ(park_task_then(t, pool, chain_fn, &ch), 0);
    ASSERT_EQ(park_task_complete(t, EIO, NULL), 0);
    park_task_release(t);
    AWAIT(atomic_load(&ch.next.runs) == 1); /* before destroy, which refuses then() */
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&ch.runs), 1);
    ASSERT_EQ(atomic_load(&ch.next.runs), 1);
    ASSERT_EQ(ch.next.err, EIO);
}

/* ---- the LIFO slot: where a worker's continuation runs, and its bound ------------ */

/* Runs on a worker: submits `behind` (to the worker's queue), then registers
 * a continuation on the completed task `t`; both record their turn. */
struct lifo_order {
    park_pool_t *pool;
    park_task_t *t;
    atomic_int turn;
    int cont_turn, behind_turn;
    pthread_t job_thread, cont_thread;
    atomic_bool done;
};

static void lifo_behind(void *arg)
{
    struct lifo_order *o = arg;
    o->behind_turn = atomic_fetch_add(&o->turn, 1);
    atomic_store(&o->done, true);
}

static void lifo_cont(park_task_t *done, void *arg)
{
    (void)done;
    struct lifo_order *o = arg;
    o->cont_thread = pthread_self();
    o->cont_turn = atomic_fetch_add(&o->turn, 1);
}

static void lifo_job(void *arg)
{
    struct lifo_order *o = arg;
    o->job_thread = pthread_self();
    ASSERT_EQ(park_pool_submit(o->pool, lifo_behind, o), 0);
    ASSERT_EQ(park_task_then(o->t, o->pool, lifo_cont, o), 0);
}

TEST(task_continuation_queued_by_a_worker_runs_next_on_that_worker)
{
    park_pool_t *pool = pool_new(1);
    struct lifo_order o;
    memset(&o, 0, sizeof o);
    o.pool = pool;
    o.t = task_new();
    ASSERT_EQ(park_task_complete(o.t, 0, NULL), 0);
    ASSERT_EQ(park_pool_submit(pool, lifo_job, &o), 0);
    AWAIT(atomic_load(&o.done));
    park_pool_destroy(pool);
    /* Queued after the submission, run before it, on the same worker. */
    ASSERT_EQ(o.cont_turn, 0);
    ASSERT_EQ(o.behind_turn, 1);
    ASSERT_TRUE(pthread_equal(o.cont_thread, o.job_thread));
    park_task_release(o.t);
}

/* A continuation that registers itself again on a completed task, for ever
 * unless `other` work ran: each link runs from the worker's LIFO slot.
 * Without the slot's bound the chain would hold the one worker until
 * LIFO_CHAIN_MAX links and the other work would wait for all of them. */
#define LIFO_CHAIN_MAX 1000000

struct lifo_chain {
    park_pool_t *pool;
    park_task_t *t;    /* completed: every link is registered on it */
    park_task_t *done; /* completed by the last link */
    atomic_int links;
    atomic_bool other_ran;
    int links_when_other_ran;
};

static void lifo_link(park_task_t *t, void *arg)
{
    (void)t;
    struct lifo_chain *ch = arg;
    int n = atomic_fetch_add(&ch->links, 1) + 1;
    if (atomic_load(&ch->other_ran) || n >= LIFO_CHAIN_MAX)
        ASSERT_EQ(park_task_complete(ch->done, 0, NULL), 0);
    else
        ASSERT_EQ(park_task_then(ch->t, ch->pool, lifo_link, ch), 0);
}

static void lifo_other(void *arg)
{
    struct lifo_chain *ch = arg;
    ch->links_when_other_ran = atomic_load(&ch->links);
    atomic_store(&ch->other_ran, true);
}

/* Starts the chain, then queues the other work on the worker's own queue. */
static void lifo_chain_start(void *arg)
{
    struct lifo_chain *ch = arg;
    ASSERT_EQ(park_task_then(ch->t, ch->pool, lifo_link, ch), 0);
    ASSERT_EQ(park_pool_submit(ch->pool, lifo_other, ch), 0);
}

static void lifo_chain_init(struct lifo_chain *ch, park_pool_t *pool)
{
    memset(ch, 0, sizeof *ch);
    ch->pool = pool;
    ch->t = task_new();
    ASSERT_EQ(park_task_complete(ch->t, 0, NULL), 0);
    ch->done = task_new();
}

static void lifo_chain_finish(struct lifo_chain *ch)
{
    ASSERT_EQ(park_task_wait(ch->done, NULL), 0);
    park_pool_destroy(ch->pool);
    ASSERT_TRUE(atomic_load(&ch->other_ran));
    /* The other work ran within a few links, not after the whole chain. */
    ASSERT_LT(ch->links_when_other_ran, LIFO_CHAIN_MAX);
    ASSERT_LT(atomic_load(&ch->links), LIFO_CHAIN_MAX);
    park_task_release(ch->t);
    park_task_release(ch->done);
}

TEST(task_continuation_chain_on_a_worker_does_not_starve_its_queue)
{
    struct lifo_chain ch;
    lifo_chain_init(&ch, pool_new(1));
    ASSERT_EQ(park_pool_submit(ch.pool, lifo_chain_start, &ch), 0);
    lifo_chain_finish(&ch);
}

TEST(task_continuation_chain_on_a_worker_does_not_starve_outside_submissions)
{
    struct lifo_chain ch;
    lifo_chain_init(&ch, pool_new(1));
    ASSERT_EQ(park_task_then(ch.t, ch.pool, lifo_link, &ch), 0);
    AWAIT(atomic_load(&ch.links) > 0); /* the chain holds the one worker */
    ASSERT_EQ(park_pool_submit(ch.pool, lifo_other, &ch), 0);
    lifo_chain_finish(&ch);
}

/* A job that blocks on a semaphore only the continuation it queued will
 * release: the continuation leaves the blocked worker's slot for the other
 * worker. */
struct lifo_block {
    park_pool_t *pool;
    park_task_t *t;
    park_sem_t sem;
    atomic_bool done;
};

static void lifo_release(park_task_t *t, void *arg)
{
    (void)t;
    ASSERT_EQ(park_sem_release(&((struct lifo_block *)arg)->sem, 1), 0);
}

static void lifo_block_job(void *arg)
{
    struct lifo_block *b = arg;
    ASSERT_EQ(park_task_then(b->t, b->pool, lifo_release, b), 0);
    park_sem_acquire(&b->sem);
    atomic_store(&b->done, true);
}

TEST(task_continuation_queued_by_a_job_that_then_blocks_runs_on_another_worker)
{
    struct lifo_block b;
    memset(&b, 0, sizeof b);
    b.pool = pool_new(2);
    b.t = task_new();
    ASSERT_EQ(park_task_complete(b.t, 0, NULL), 0);
    ASSERT_EQ(park_sem_init(&b.sem, 0, 1), 0);
    ASSERT_EQ(park_pool_submit(b.pool, lifo_block_job, &b), 0);
    AWAIT(atomic_load(&b.done));
    park_pool_destroy(b.pool);
    ASSERT_EQ(park_sem_destroy(&b.sem), 0);
    park_task_release(b.t);
}

/* ---- the local queue: a job's continuations, in order; aged out -------------------- */

/* Continuations that record the order they start in. */
#define ORDER_CONTS 12 /* more than a worker's local queue holds (8) */

struct order_rec;

struct order_arg {
    struct order_rec *r;
    int index;
};

struct order_rec {
    park_pool_t *pool;
    park_task_t *t;
    atomic_int next;
    int started[ORDER_CONTS];
    struct order_arg arg[ORDER_CONTS];
};

static void order_cont(park_task_t *t, void *arg)
{
    (void)t;
    struct order_arg *a = arg;
    a->r->started[atomic_fetch_add(&a->r->next, 1)] = a->index;
}

static void order_complete(void *arg)
{
    struct order_rec *r = arg;
    ASSERT_EQ(park_task_complete(r->t, 0, NULL), 0);
}

/* n continuations of one task, completed by a job of a one-worker pool,
 * start in registration order: those the local queue holds, and those a
 * burst beyond it moves to the ring with the rest. */
static void order_check(int n)
{
    struct order_rec r;
    memset(&r, 0, sizeof r);
    r.pool = pool_new(1);
    r.t = task_new();
    for (int i = 0; i < n; i++) {
        r.arg[i] = (struct order_arg){&r, i};
        ASSERT_EQ(park_task_then(r.t, r.pool, order_cont, &r.arg[i]), 0);
    }
    ASSERT_EQ(park_pool_submit(r.pool, order_complete, &r), 0);
    AWAIT(atomic_load(&r.next) == n);
    park_pool_destroy(r.pool);
    for (int i = 0; i < n; i++)
        ASSERT_EQ(r.started[i], i);
    park_task_release(r.t);
}

TEST(task_continuations_completed_by_one_job_start_in_order_on_its_worker)
{
    order_check(5);
    order_check(ORDER_CONTS);
}

/* A job queues three continuations: the first runs long (5 ms, outside
 * park), and the second waits for the third to start. Left in the worker's
 * local queue the third would wait behind the second for ever; aged out
 * after the first, it goes to the ring and the other worker runs it. */
struct aged {
    park_pool_t *pool;
    park_task_t *t;
    atomic_bool third_started, second_saw_it, second_done;
};

static void aged_first(park_task_t *t, void *arg)
{
    (void)t;
    (void)arg;
    test_sleep_ns(5 * (uint64_t)MS);
}

static void aged_second(park_task_t *t, void *arg)
{
    (void)t;
    struct aged *a = arg;
    uint64_t give_up = test_now_ns() + 10000 * (uint64_t)MS;
    while (!atomic_load(&a->third_started) && test_now_ns() < give_up)
        test_sleep_ns(100 * (uint64_t)US);
    atomic_store(&a->second_saw_it, atomic_load(&a->third_started));
    atomic_store(&a->second_done, true);
}

static void aged_third(park_task_t *t, void *arg)
{
    (void)t;
    atomic_store(&((struct aged *)arg)->third_started, true);
}

static void aged_job(void *arg)
{
    struct aged *a = arg;
    ASSERT_EQ(park_task_complete(a->t, 0, NULL), 0);
}

TEST(task_continuations_held_back_by_a_long_one_move_to_another_worker)
{
    struct aged a;
    memset(&a, 0, sizeof a);
    a.pool = pool_new(2);
    a.t = task_new();
    ASSERT_EQ(park_task_then(a.t, a.pool, aged_first, &a), 0);
    ASSERT_EQ(park_task_then(a.t, a.pool, aged_second, &a), 0);
    ASSERT_EQ(park_task_then(a.t, a.pool, aged_third, &a), 0);
    ASSERT_EQ(park_pool_submit(a.pool, aged_job, &a), 0);
    AWAIT(atomic_load(&a.second_done));
    park_pool_destroy(a.pool);
    ASSERT_TRUE(atomic_load(&a.second_saw_it));
    park_task_release(a.t);
}

/* A job completes a task with two continuations and blocks on a semaphore
 * that only the second releases: both leave its local queue for the ring
 * when it blocks, and the other worker runs them. */
static void ignore_cont(park_task_t *t, void *arg)
{
    (void)t;
    (void)arg;
}

static void block_on_second_job(void *arg)
{
    struct lifo_block *b = arg;
    ASSERT_EQ(park_task_complete(b->t, 0, NULL), 0);
    park_sem_acquire(&b->sem);
    atomic_store(&b->done, true);
}

TEST(task_continuations_of_a_job_that_then_blocks_run_on_another_worker)
{
    struct lifo_block b;
    memset(&b, 0, sizeof b);
    b.pool = pool_new(2);
    b.t = task_new();
    ASSERT_EQ(park_sem_init(&b.sem, 0, 1), 0);
    ASSERT_EQ(park_task_then(b.t, b.pool, ignore_cont, &b), 0);
    ASSERT_EQ(park_task_then(b.t, b.pool, lifo_release, &b), 0);
    ASSERT_EQ(park_pool_submit(b.pool, block_on_second_job, &b), 0);
    AWAIT(atomic_load(&b.done));
    park_pool_destroy(b.pool);
    ASSERT_EQ(park_sem_destroy(&b.sem), 0);
    park_task_release(b.t);
}

#define MANY_CONTS 200

TEST(task_many_continuations_each_run_once)
{
    int token;
    park_pool_t *pool = pool_new(2);
    park_task_t *t = task_new();
    static struct cont c[MANY_CONTS];
    for (int i = 0; i < MANY_CONTS; i++) {
        cont_init(&c[i], pool, t);
        then(t, &c[i]);
    }
    ASSERT_EQ(complete(t, 0, &token), 0);
    for (int i = 0; i < MANY_CONTS; i++)
        AWAIT(atomic_load(&c[i].runs) == 1);
    park_pool_destroy(pool);
    for (int i = 0; i < MANY_CONTS; i++) {
        ASSERT_EQ(atomic_load(&c[i].runs), 1);
        ASSERT_EQ(c[i].err, 0);
        ASSERT_TRUE(c[i].result == &token);
    }
    park_task_release(t);
}

/* Continuations registered before and after completion, on two pools. */
TEST(task_continuations_before_and_after_completion_run_on_their_own_pools)
{
    park_pool_t *a = pool_new(1), *b = pool_new(1);
    park_task_t *t = task_new();
    struct cont early_a, early_b, late_a, late_b;
    cont_init(&early_a, a, t);
    cont_init(&early_b, b, t);
    cont_init(&late_a, a, t);
    cont_init(&late_b, b, t);
    then(t, &early_a);
    then(t, &early_b);
    ASSERT_EQ(complete(t, EIO, NULL), 0);
    then(t, &late_a);
    then(t, &late_b);
    park_pool_destroy(a);
    park_pool_destroy(b);
    struct cont *all[] = {&early_a, &early_b, &late_a, &late_b};
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(atomic_load(&all[i]->runs), 1);
        ASSERT_EQ(all[i]->err, EIO);
    }
    park_task_release(t);
}

/* ---- run ------------------------------------------------------------------------ */

struct job {
    park_pool_t *pool;
    int err;
    void *result; /* set as the result when set_result */
    bool set_result;
    atomic_int runs;
    park_pool_t *ran_on;
};

static int job_fn(void *arg, void **result)
{
    struct job *j = arg;
    j->ran_on = park_pool_current();
    atomic_fetch_add(&j->runs, 1);
    if (j->set_result)
        *result = j->result;
    return j->err;
}

TEST(task_run_runs_fn_on_the_pool_and_delivers_its_error_and_result)
{
    int token;
    park_pool_t *pool = pool_new(2);
    struct job j = {.err = EIO, .result = &token, .set_result = true};
    park_task_t *t = park_task_run(pool, job_fn, &j);
    ASSERT_TRUE(t != NULL);
    void *r = NULL;
    ASSERT_EQ(park_task_wait(t, &r), EIO);
    ASSERT_TRUE(r == &token);
    ASSERT_EQ(atomic_load(&j.runs), 1);
    ASSERT_TRUE(j.ran_on == pool);
    park_task_release(t);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&j.runs), 1);
}

TEST(task_run_whose_fn_sets_no_result_gives_null)
{
    park_pool_t *pool = pool_new(1);
    struct job j = {.err = 0};
    park_task_t *t = park_task_run(pool, job_fn, &j);
    ASSERT_TRUE(t != NULL);
    void *r = &r;
    ASSERT_EQ(park_task_wait(t, &r), 0);
    ASSERT_TRUE(r == NULL);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(task_run_cancelled_before_it_starts_never_runs_fn)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    struct job j = {.err = 0};
    park_task_t *t = park_task_run(pool, job_fn, &j);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_cancel(t), 0);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&j.runs), 0);
    assert_completed(t, ECANCELED, NULL);
    park_task_release(t);
}

TEST(task_run_completed_by_hand_before_it_starts_never_runs_fn)
{
    int token;
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    struct job j = {.err = EIO};
    park_task_t *t = park_task_run(pool, job_fn, &j);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_complete(t, 0, &token), 0);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&j.runs), 0);
    assert_completed(t, 0, &token);
    park_task_release(t);
}

/* ---- wait ----------------------------------------------------------------------- */

struct completer {
    park_task_t *t;
    int err;
    void *result;
    uint64_t after_ns; /* choreography: lets the waiter park first */
};

static void *completer_main(void *arg)
{
    struct completer *c = arg;
    test_sleep_ns(c->after_ns);
    ASSERT_EQ(park_task_complete(c->t, c->err, c->result), 0);
    return NULL;
}

TEST(task_wait_from_outside_returns_when_another_thread_completes)
{
    int token;
    park_task_t *t = task_new();
    struct completer c = {t, ENOENT, &token, 20 * MS};
    test_threads_t *th = test_threads_start(1, completer_main, &c, sizeof c);
    void *r = NULL;
    ASSERT_EQ(park_task_wait(t, &r), ENOENT);
    ASSERT_TRUE(r == &token);
    test_threads_join(th);
    park_task_release(t);
}

TEST(task_wait_on_a_completed_task_returns_at_once)
{
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_complete(t, EIO, NULL), 0);
    ASSERT_EQ(park_task_wait(t, NULL), EIO);
    ASSERT_EQ(park_task_wait_until(t, NULL, 0), EIO);
    park_task_release(t);
}

/* A task that waits on another run task of its own pool: on a 1-thread pool
 * the waiter must run the other task itself. */
struct waiter {
    park_pool_t *pool;
    int inner_token;
};

static int inner_fn(void *arg, void **result)
{
    struct waiter *w = arg;
    *result = &w->inner_token;
    return EIO;
}

static int waits_for_run_fn(void *arg, void **result)
{
    struct waiter *w = arg;
    park_task_t *inner = park_task_run(w->pool, inner_fn, w);
    ASSERT_TRUE(inner != NULL);
    void *r = NULL;
    int err = park_task_wait(inner, &r);
    park_task_release(inner);
    ASSERT_EQ(err, EIO);
    ASSERT_TRUE(r == &w->inner_token);
    *result = w;
    return 0;
}

TEST(task_wait_on_a_worker_runs_other_work_instead_of_deadlocking)
{
    park_pool_t *pool = pool_new(1);
    struct waiter w = {pool, 0};
    park_task_t *t = park_task_run(pool, waits_for_run_fn, &w);
    ASSERT_TRUE(t != NULL);
    void *r = NULL;
    ASSERT_EQ(park_task_wait(t, &r), 0);
    ASSERT_TRUE(r == &w);
    park_task_release(t);
    park_pool_destroy(pool);
}

/* The same with the awaited task completed by a plain submission. */
static void complete_job(void *arg)
{
    ASSERT_EQ(park_task_complete(arg, EPERM, arg), 0);
}

static int waits_for_submission_fn(void *arg, void **result)
{
    park_pool_t *pool = arg;
    park_task_t *inner = task_new();
    ASSERT_EQ(park_pool_submit(pool, complete_job, inner), 0);
    void *r = NULL;
    ASSERT_EQ(park_task_wait(inner, &r), EPERM);
    ASSERT_TRUE(r == inner);
    park_task_release(inner);
    (void)result;
    return 0;
}

TEST(task_wait_on_a_worker_runs_the_submission_that_completes_the_task)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = park_task_run(pool, waits_for_submission_fn, pool);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

/* A worker waits for a task only an outside thread completes. */
struct outside_done {
    park_task_t *inner;
    atomic_bool waiting;
};

static int waits_for_outside_fn(void *arg, void **result)
{
    struct outside_done *o = arg;
    atomic_store(&o->waiting, true);
    void *r = NULL;
    int err = park_task_wait(o->inner, &r);
    *result = r;
    return err;
}

TEST(task_wait_on_a_worker_returns_when_an_outside_thread_completes)
{
    int token;
    park_pool_t *pool = pool_new(1);
    struct outside_done o = {task_new(), false};
    park_task_t *t = park_task_run(pool, waits_for_outside_fn, &o);
    ASSERT_TRUE(t != NULL);
    AWAIT(atomic_load(&o.waiting));
    test_sleep_ns(10 * MS); /* choreography: let it reach the wait */
    ASSERT_EQ(park_task_complete(o.inner, ENOSPC, &token), 0);
    void *r = NULL;
    ASSERT_EQ(park_task_wait(t, &r), ENOSPC);
    ASSERT_TRUE(r == &token);
    park_task_release(t);
    park_task_release(o.inner);
    park_pool_destroy(pool);
}

/* The only worker waits, with nothing to help, for a task that only a
 * submission made from outside afterwards completes: the submission must
 * wake it (a lost wake-up hangs, and the watchdog fails the test). */
static void complete_inner(void *arg)
{
    park_task_complete(arg, 0, NULL);
}

TEST(task_wait_on_the_only_worker_runs_work_submitted_from_outside_while_it_sleeps)
{
    park_pool_t *pool = pool_new(1);
    for (int round = 0; round < 20; round++) {
        struct outside_done o = {task_new(), false};
        park_task_t *t = park_task_run(pool, waits_for_outside_fn, &o);
        ASSERT_TRUE(t != NULL);
        AWAIT(atomic_load(&o.waiting));
        if (round % 2)
            test_sleep_ns(2 * MS); /* choreography: let it fall asleep */
        ASSERT_EQ(park_pool_submit(pool, complete_inner, o.inner), 0);
        ASSERT_EQ(park_task_wait(t, NULL), 0);
        park_task_release(t);
        park_task_release(o.inner);
    }
    park_pool_destroy(pool);
}

/* A worker waits, with a deadline, for a task nobody completes. */
static int waits_until_fn(void *arg, void **result)
{
    park_task_t *never = arg;
    park_time_t deadline = park_deadline_in(10 * MS);
    ASSERT_EQ(park_task_wait_until(never, NULL, deadline), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    assert_pending(never);
    (void)result;
    return 0;
}

TEST(task_wait_until_on_a_worker_times_out_not_before_the_deadline)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *never = task_new();
    park_task_t *t = park_task_run(pool, waits_until_fn, never);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    ASSERT_EQ(park_task_cancel(never), 0);
    park_task_release(never);
    park_task_release(t);
    park_pool_destroy(pool);
}

/* A worker of one pool waits for a task run on another. */
struct cross {
    park_pool_t *other;
    struct job j;
};

static int waits_on_other_pool_fn(void *arg, void **result)
{
    struct cross *x = arg;
    park_task_t *inner = park_task_run(x->other, job_fn, &x->j);
    ASSERT_TRUE(inner != NULL);
    int err = park_task_wait(inner, result);
    park_task_release(inner);
    return err;
}

TEST(task_wait_on_a_worker_for_a_task_of_another_pool)
{
    int token;
    park_pool_t *a = pool_new(1), *b = pool_new(1);
    struct cross x = {b, {.err = EIO, .result = &token, .set_result = true}};
    park_task_t *t = park_task_run(a, waits_on_other_pool_fn, &x);
    ASSERT_TRUE(t != NULL);
    void *r = NULL;
    ASSERT_EQ(park_task_wait(t, &r), EIO);
    ASSERT_TRUE(r == &token);
    ASSERT_TRUE(x.j.ran_on == b);
    park_task_release(t);
    park_pool_destroy(a);
    park_pool_destroy(b);
}

/* A worker waits for a delay: only the timer completes it. */
static int waits_for_delay_fn(void *arg, void **result)
{
    park_pool_t *pool = arg;
    park_time_t start = park_now();
    park_task_t *d = park_task_delay(pool, 5 * MS);
    ASSERT_TRUE(d != NULL);
    ASSERT_EQ(park_task_wait(d, NULL), 0);
    ASSERT_GE(park_now() - start, 5 * MS);
    park_task_release(d);
    (void)result;
    return 0;
}

TEST(task_wait_on_a_worker_for_a_delay_of_its_own_pool)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = park_task_run(pool, waits_for_delay_fn, pool);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(task_wait_until_a_deadline_on_a_pending_task_is_etimedout_not_before_it)
{
    park_task_t *t = task_new();
    static const uint64_t waits[] = {0, 1 * MS, 10 * MS, 30 * MS};
    for (size_t k = 0; k < sizeof waits / sizeof waits[0]; k++) {
        park_time_t deadline = park_now() + waits[k];
        void *r = &r;
        ASSERT_EQ(park_task_wait_until(t, &r, deadline), ETIMEDOUT);
        ASSERT_GE(park_now(), deadline);
        ASSERT_LT(park_now() - deadline, LATE_NS);
        assert_pending(t); /* not cancelled */
    }
    ASSERT_EQ(park_task_wait_until(t, NULL, 0), ETIMEDOUT);
    ASSERT_EQ(park_task_complete(t, 0, NULL), 0);
    ASSERT_EQ(park_task_wait_until(t, NULL, 0), 0);
    park_task_release(t);
}

TEST(task_wait_until_returns_the_error_of_a_task_that_completes_in_time)
{
    int token;
    park_task_t *t = task_new();
    struct completer c = {t, EIO, &token, 5 * MS};
    test_threads_t *th = test_threads_start(1, completer_main, &c, sizeof c);
    void *r = NULL;
    ASSERT_EQ(park_task_wait_until(t, &r, PARK_FOREVER), EIO);
    ASSERT_TRUE(r == &token);
    test_threads_join(th);
    park_task_release(t);
}

/* A task that failed with ETIMEDOUT is told apart by park_task_result. */
TEST(task_wait_until_etimedout_is_told_apart_by_result)
{
    park_task_t *pending = task_new(), *failed = task_new();
    ASSERT_EQ(park_task_complete(failed, ETIMEDOUT, NULL), 0);
    ASSERT_EQ(park_task_wait_until(pending, NULL, 0), ETIMEDOUT);
    ASSERT_EQ(park_task_wait_until(failed, NULL, 0), ETIMEDOUT);
    ASSERT_EQ(park_task_result(pending, NULL), EINPROGRESS);
    ASSERT_EQ(park_task_result(failed, NULL), ETIMEDOUT);
    ASSERT_EQ(park_task_cancel(pending), 0);
    park_task_release(pending);
    park_task_release(failed);
}

/* ---- when_all, when_any --------------------------------------------------------- */

static void make_tasks(park_task_t **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ts[i] = task_new();
}

static void release_tasks(park_task_t **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        park_task_release(ts[i]);
}

TEST(task_when_all_completes_with_0_once_all_succeed)
{
    int token;
    park_pool_t *pool = pool_new(2);
    park_task_t *ts[3];
    make_tasks(ts, 3);
    park_task_t *all = park_task_when_all(pool, ts, 3);
    ASSERT_TRUE(all != NULL);
    ASSERT_EQ(park_task_complete(ts[1], 0, &token), 0);
    ASSERT_EQ(park_task_complete(ts[0], 0, &token), 0);
    assert_pending(all); /* ts[2] is pending */
    ASSERT_EQ(park_task_complete(ts[2], 0, &token), 0);
    void *r = &r;
    ASSERT_EQ(park_task_wait(all, &r), 0);
    ASSERT_TRUE(r == NULL);
    park_task_release(all);
    release_tasks(ts, 3);
    park_pool_destroy(pool);
}

TEST(task_when_all_completes_with_the_first_error)
{
    park_pool_t *pool = pool_new(2);
    park_task_t *ts[4];
    make_tasks(ts, 4);
    park_task_t *all = park_task_when_all(pool, ts, 4);
    ASSERT_TRUE(all != NULL);
    ASSERT_EQ(park_task_complete(ts[3], 0, NULL), 0);
    ASSERT_EQ(park_task_complete(ts[2], EIO, NULL), 0);
    test_sleep_ns(20 * MS); /* choreography: ts[2] is well first */
    ASSERT_EQ(park_task_complete(ts[0], EPERM, NULL), 0);
    assert_pending(all); /* ts[1] is pending */
    ASSERT_EQ(park_task_cancel(ts[1]), 0);
    void *r = &r;
    ASSERT_EQ(park_task_wait(all, &r), EIO);
    ASSERT_TRUE(r == NULL);
    park_task_release(all);
    release_tasks(ts, 4);
    park_pool_destroy(pool);
}

TEST(task_when_all_of_completed_tasks_completes)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *ts[2];
    make_tasks(ts, 2);
    ASSERT_EQ(park_task_complete(ts[0], 0, NULL), 0);
    ASSERT_EQ(park_task_complete(ts[1], ENOENT, NULL), 0);
    park_task_t *all = park_task_when_all(pool, ts, 2);
    ASSERT_TRUE(all != NULL);
    ASSERT_EQ(park_task_wait(all, NULL), ENOENT);
    park_task_release(all);
    release_tasks(ts, 2);
    park_pool_destroy(pool);
}

TEST(task_when_all_of_no_tasks_is_completed_with_0)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *all = park_task_when_all(pool, NULL, 0);
    ASSERT_TRUE(all != NULL);
    assert_completed(all, 0, NULL);
    park_task_release(all);
    park_pool_destroy(pool);
}

TEST(task_when_any_gives_the_index_of_the_first_completed)
{
    park_pool_t *pool = pool_new(2);
    park_task_t *ts[4];
    make_tasks(ts, 4);
    park_task_t *any = park_task_when_any(pool, ts, 4);
    ASSERT_TRUE(any != NULL);
    assert_pending(any);
    ASSERT_EQ(park_task_complete(ts[2], EIO, NULL), 0); /* its own error does not matter */
    void *r = NULL;
    ASSERT_EQ(park_task_wait(any, &r), 0);
    ASSERT_EQ((uintptr_t)r, 2);
    for (int i = 0; i < 4; i++)
        if (i != 2)
            assert_pending(ts[i]);
    ASSERT_EQ(park_task_complete(ts[0], 0, NULL), 0);
    ASSERT_EQ(park_task_result(any, &r), 0);
    ASSERT_EQ((uintptr_t)r, 2);
    ASSERT_EQ(park_task_cancel(ts[1]), 0);
    ASSERT_EQ(park_task_cancel(ts[3]), 0);
    park_task_release(any);
    release_tasks(ts, 4);
    park_pool_destroy(pool);
}

TEST(task_when_any_with_a_completed_input_gives_its_index)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *ts[3];
    make_tasks(ts, 3);
    ASSERT_EQ(park_task_cancel(ts[1]), 0);
    park_task_t *any = park_task_when_any(pool, ts, 3);
    ASSERT_TRUE(any != NULL);
    void *r = NULL;
    ASSERT_EQ(park_task_wait(any, &r), 0);
    ASSERT_EQ((uintptr_t)r, 1);
    ASSERT_EQ(park_task_cancel(ts[0]), 0);
    ASSERT_EQ(park_task_cancel(ts[2]), 0);
    park_task_release(any);
    release_tasks(ts, 3);
    park_pool_destroy(pool);
}

/* A combinator completes within its input's completion, but its own
 * continuations are queued like any other. */
TEST(task_when_all_and_when_any_continuations_never_run_within_the_completing_call)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *ts[2];
    make_tasks(ts, 2);
    park_task_t *all = park_task_when_all(pool, ts, 2);
    park_task_t *any = park_task_when_any(pool, ts, 2);
    ASSERT_TRUE(all != NULL && any != NULL);
    struct cont c_all, c_any;
    cont_init(&c_all, pool, all);
    cont_init(&c_any, pool, any);
    then(all, &c_all);
    then(any, &c_any);
    ASSERT_EQ(complete(ts[1], EIO, NULL), 0);
    ASSERT_EQ(complete(ts[0], 0, NULL), 0);
    AWAIT(atomic_load(&c_all.runs) == 1);
    AWAIT(atomic_load(&c_any.runs) == 1);
    ASSERT_EQ(c_all.err, EIO);
    ASSERT_EQ(c_any.err, 0);
    ASSERT_EQ((uintptr_t)c_any.result, 1);
    park_task_release(all);
    park_task_release(any);
    release_tasks(ts, 2);
    park_pool_destroy(pool);
}

TEST(task_when_any_of_no_tasks_is_completed_with_einval)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *any = park_task_when_any(pool, NULL, 0);
    ASSERT_TRUE(any != NULL);
    ASSERT_TRUE(park_task_done(any));
    ASSERT_EQ(park_task_result(any, NULL), EINVAL);
    park_task_release(any);
    park_pool_destroy(pool);
}

/* ---- delay, cancel_at ----------------------------------------------------------- */

TEST(task_delay_is_never_early)
{
    park_pool_t *pool = pool_new(1);
    static const uint64_t delays[] = {0, 1 * MS, 5 * MS, 20 * MS};
    for (size_t k = 0; k < sizeof delays / sizeof delays[0]; k++) {
        park_time_t start = park_now();
        park_task_t *d = park_task_delay(pool, delays[k]);
        ASSERT_TRUE(d != NULL);
        void *r = &r;
        ASSERT_EQ(park_task_wait(d, &r), 0);
        ASSERT_TRUE(r == NULL);
        ASSERT_GE(park_now() - start, delays[k]);
        park_task_release(d);
    }
    park_pool_destroy(pool);
}

/* Armed in the reverse of their expiry order; each is checked by its own
 * continuation at the time it runs. */
#define DELAYS 8

struct delay_check {
    park_time_t due;
    park_time_t ran_at;
    int err;
    atomic_int runs;
};

static void delay_cont(park_task_t *done, void *arg)
{
    struct delay_check *d = arg;
    d->ran_at = park_now();
    d->err = park_task_result(done, NULL);
    atomic_fetch_add(&d->runs, 1);
}

TEST(task_many_armed_delays_are_each_never_early)
{
    park_pool_t *pool = pool_new(2);
    struct delay_check dc[DELAYS];
    memset(dc, 0, sizeof dc);
    for (int i = 0; i < DELAYS; i++) {
        uint64_t ns = (uint64_t)(DELAYS - i) * 3 * MS;
        dc[i].due = park_now() + ns;
        park_task_t *d = park_task_delay(pool, ns);
        ASSERT_TRUE(d != NULL);
        ASSERT_EQ(park_task_then(d, pool, delay_cont, &dc[i]), 0);
        park_task_release(d);
    }
    for (int i = 0; i < DELAYS; i++)
        AWAIT(atomic_load(&dc[i].runs) == 1);
    for (int i = 0; i < DELAYS; i++) {
        ASSERT_EQ(dc[i].err, 0);
        ASSERT_GE(dc[i].ran_at, dc[i].due);
    }
    park_pool_destroy(pool);
}

TEST(task_cancel_at_completes_a_pending_task_with_etimedout_not_before_the_deadline)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    park_time_t deadline = park_deadline_in(10 * MS);
    ASSERT_EQ(park_task_cancel_at_on(t, pool, deadline), 0);
    void *r = &r;
    ASSERT_EQ(park_task_wait(t, &r), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_TRUE(r == NULL);
    ASSERT_EQ(park_task_result(t, NULL), ETIMEDOUT);
    ASSERT_EQ(park_task_complete(t, 0, NULL), EALREADY);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(task_cancel_at_a_past_deadline_completes_the_task_with_etimedout)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_cancel_at_on(t, pool, 0), 0);
    ASSERT_EQ(park_task_wait(t, NULL), ETIMEDOUT);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(task_cancel_at_on_a_completed_task_is_ealready)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_complete(t, 0, &t), 0);
    ASSERT_EQ(park_task_cancel_at_on(t, pool, park_deadline_in(MS)), EALREADY);
    ASSERT_EQ(park_task_cancel_at_on(t, pool, 0), EALREADY);
    assert_completed(t, 0, &t);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(task_cancel_at_on_a_task_without_pool_is_einval)
{
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_cancel_at(t, park_deadline_in(MS)), EINVAL);
    assert_pending(t);
    ASSERT_EQ(park_task_cancel(t), 0);
    park_task_release(t);
}

/* A run task's deadline is kept by the timer of its own pool. */
TEST(task_cancel_at_of_a_run_task_uses_its_pool)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    struct job j = {.err = 0};
    park_task_t *t = park_task_run(pool, job_fn, &j);
    ASSERT_TRUE(t != NULL);
    park_time_t deadline = park_deadline_in(5 * MS);
    ASSERT_EQ(park_task_cancel_at(t, deadline), 0);
    ASSERT_EQ(park_task_wait(t, NULL), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&j.runs), 0);
    ASSERT_EQ(park_task_result(t, NULL), ETIMEDOUT);
    park_task_release(t);
}

TEST(task_cancel_at_completed_before_the_deadline_keeps_the_result)
{
    int token;
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    park_time_t deadline = park_deadline_in(5 * MS);
    ASSERT_EQ(park_task_cancel_at_on(t, pool, deadline), 0);
    ASSERT_EQ(park_task_complete(t, 0, &token), 0);
    while (park_now() < deadline + 5 * MS) /* choreography: the timer fires */
        test_sleep_ns(MS);
    assert_completed(t, 0, &token);
    park_task_release(t);
    park_pool_destroy(pool);
}

/* ---- shutdown ------------------------------------------------------------------- */

/* Runs check(pool, arg) on a worker while the main thread is inside
 * park_pool_destroy (seen by a submission failing with EPIPE). */
struct during {
    park_pool_t *pool;
    void (*check)(park_pool_t *pool, void *arg);
    void *arg;
    atomic_uint probes;
    atomic_bool checked;
};

static void count(void *arg)
{
    atomic_fetch_add((atomic_uint *)arg, 1);
}

static void during_job(void *arg)
{
    struct during *d = arg;
    for (;;) {
        int rc = park_pool_submit(d->pool, count, &d->probes);
        if (rc == EPIPE)
            break;
        ASSERT_EQ(rc, 0);
        test_sleep_ns(200 * US);
    }
    d->check(d->pool, d->arg);
    atomic_store(&d->checked, true);
}

static void during_destroy(void (*check)(park_pool_t *, void *), void *arg)
{
    struct during d = {.pool = pool_new(2), .check = check, .arg = arg};
    ASSERT_EQ(park_pool_submit(d.pool, during_job, &d), 0);
    park_pool_destroy(d.pool);
    ASSERT_TRUE(atomic_load(&d.checked));
}

static void then_while_shutting_down(park_pool_t *pool, void *arg)
{
    struct cont *c = arg;
    park_task_t *t = task_new();
    c->pool = pool;
    ASSERT_EQ(park_task_then(t, pool, cont_fn, c), EPIPE);
    ASSERT_EQ(park_task_complete(t, 0, NULL), 0);
    park_task_release(t);
    t = task_new();
    ASSERT_EQ(park_task_complete(t, 0, NULL), 0);
    ASSERT_EQ(park_task_then(t, pool, cont_fn, c), EPIPE);
    park_task_release(t);
}

TEST(task_then_on_a_pool_shutting_down_is_epipe_and_never_runs)
{
    struct cont c;
    cont_init(&c, NULL, NULL);
    during_destroy(then_while_shutting_down, &c);
    ASSERT_EQ(atomic_load(&c.runs), 0);
}

static void run_while_shutting_down(park_pool_t *pool, void *arg)
{
    struct job *j = arg;
    park_task_t *t = park_task_run(pool, job_fn, j);
    ASSERT_TRUE(t != NULL);
    assert_completed(t, EPIPE, NULL);
    park_task_release(t);
}

TEST(task_run_on_a_pool_shutting_down_is_completed_with_epipe)
{
    struct job j = {.err = 0};
    during_destroy(run_while_shutting_down, &j);
    ASSERT_EQ(atomic_load(&j.runs), 0);
}

static void delay_while_shutting_down(park_pool_t *pool, void *arg)
{
    (void)arg;
    park_task_t *d = park_task_delay(pool, MS);
    ASSERT_TRUE(d != NULL);
    assert_completed(d, EPIPE, NULL);
    park_task_release(d);
}

TEST(task_delay_on_a_pool_shutting_down_is_completed_with_epipe)
{
    during_destroy(delay_while_shutting_down, NULL);
}

static void cancel_at_while_shutting_down(park_pool_t *pool, void *arg)
{
    (void)arg;
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_cancel_at_on(t, pool, park_deadline_in(MS)), EPIPE);
    assert_pending(t);
    ASSERT_EQ(park_task_cancel(t), 0);
    park_task_release(t);
}

TEST(task_cancel_at_on_a_pool_shutting_down_is_epipe)
{
    during_destroy(cancel_at_while_shutting_down, NULL);
}

TEST(task_pool_destroy_completes_armed_delays_with_ecanceled)
{
    park_pool_t *pool = pool_new(2);
    park_task_t *d = park_task_delay(pool, 3600 * (uint64_t)1000000000u);
    ASSERT_TRUE(d != NULL);
    struct cont c;
    cont_init(&c, pool, d);
    then(d, &c);
    park_pool_destroy(pool);
    assert_completed(d, ECANCELED, NULL);
    ASSERT_EQ(atomic_load(&c.runs), 1); /* continuations it leads to run too */
    ASSERT_EQ(c.err, ECANCELED);
    park_task_release(d);
}

/* The longest delay and deadline (now + ns saturates): armed, never due. */
TEST(task_pool_destroy_cancels_a_delay_and_a_deadline_that_are_never_due)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *d = park_task_delay(pool, UINT64_MAX);
    ASSERT_TRUE(d != NULL);
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_cancel_at_on(t, pool, PARK_FOREVER), 0);
    ASSERT_EQ(park_task_wait_until(d, NULL, park_deadline_in(5 * MS)), ETIMEDOUT);
    assert_pending(d);
    assert_pending(t);
    park_pool_destroy(pool);
    assert_completed(d, ECANCELED, NULL);
    assert_completed(t, ECANCELED, NULL);
    park_task_release(d);
    park_task_release(t);
}

TEST(task_pool_destroy_completes_tasks_with_armed_deadlines_with_ecanceled)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_cancel_at_on(t, pool, park_deadline_in(3600 * (uint64_t)1000000000u)), 0);
    park_pool_destroy(pool);
    assert_completed(t, ECANCELED, NULL);
    park_task_release(t);
}

TEST(task_pool_destroy_runs_continuations_of_tasks_completed_before)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    park_task_t *t = task_new();
    struct cont c;
    cont_init(&c, pool, t);
    then(t, &c);
    ASSERT_EQ(complete(t, 0, NULL), 0);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&c.runs), 1);
    park_task_release(t);
}

/* ---- references dropped in any order -------------------------------------------- */

/* Tasks come from a per-thread cache, so a task freed too early is not
 * always seen by AddressSanitizer: its block goes back to the cache of the
 * thread that dropped the last reference. Decoys are pending tasks taken
 * from that cache right after the releases under test: a freed task's block
 * becomes a decoy, so a stale reader sees a pending task (not the result it
 * expects) and a stale completion completes a decoy (which must stay
 * pending). */
#define DECOYS 32

struct decoys {
    park_task_t *t[DECOYS];
};

static void decoys_place(struct decoys *d)
{
    for (int i = 0; i < DECOYS; i++)
        d->t[i] = task_new();
}

static void decoys_check_and_release(struct decoys *d)
{
    for (int i = 0; i < DECOYS; i++) {
        if (park_task_done(d->t[i]))
            test_fail(__FILE__, __LINE__, "a decoy was completed: a task was used after its free");
        ASSERT_EQ(park_task_cancel(d->t[i]), 0);
        park_task_release(d->t[i]);
    }
}

TEST(task_release_of_a_run_task_before_it_runs_still_runs_it)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    struct job j = {.err = EIO};
    park_task_t *t = park_task_run(pool, job_fn, &j);
    ASSERT_TRUE(t != NULL);
    park_task_release(t); /* the run's own reference keeps it */
    struct decoys d;
    decoys_place(&d);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&j.runs), 1);
    decoys_check_and_release(&d);
}

TEST(task_release_before_completion_keeps_the_task_for_its_continuation)
{
    int token;
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    park_task_t *t = task_new();
    park_task_t *completer_ref = park_task_retain(t);
    struct cont c;
    cont_init(&c, pool, t);
    then(t, &c);
    park_task_release(t); /* the caller's reference, while pending */
    ASSERT_EQ(park_task_complete(completer_ref, EIO, &token), 0);
    park_task_release(completer_ref); /* before the continuation runs */
    struct decoys d;
    decoys_place(&d);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&c.runs), 1);
    ASSERT_EQ(c.err, EIO);
    ASSERT_TRUE(c.result == &token);
    decoys_check_and_release(&d);
}

TEST(task_release_after_completion_before_continuations_run_is_safe)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    park_task_t *t = task_new();
    struct cont c[3];
    for (int i = 0; i < 3; i++) {
        cont_init(&c[i], pool, t);
        then(t, &c[i]);
    }
    ASSERT_EQ(park_task_complete(t, ENOENT, NULL), 0);
    park_task_release(t); /* the continuations are queued behind the gate */
    struct decoys d;
    decoys_place(&d);
    gate_open(&g);
    park_pool_destroy(pool);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(atomic_load(&c[i].runs), 1);
        ASSERT_EQ(c[i].err, ENOENT);
    }
    decoys_check_and_release(&d);
}

TEST(task_release_of_a_completed_task_with_a_late_continuation_is_safe)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_complete(t, EPERM, NULL), 0);
    struct cont c;
    cont_init(&c, pool, t);
    then(t, &c); /* queued at once, behind the gate */
    park_task_release(t);
    struct decoys d;
    decoys_place(&d);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&c.runs), 1);
    ASSERT_EQ(c.err, EPERM);
    decoys_check_and_release(&d);
}

TEST(task_continuation_may_retain_the_task_beyond_its_call)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = task_new();
    struct cont c;
    cont_init(&c, pool, t);
    c.keep_it = true;
    then(t, &c);
    ASSERT_EQ(park_task_complete(t, EIO, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool); /* the worker's cache is freed as it exits */
    ASSERT_EQ(atomic_load(&c.runs), 1);
    ASSERT_TRUE(c.keep != NULL);
    ASSERT_EQ(park_task_result(c.keep, NULL), EIO);
    park_task_release(c.keep);
}

TEST(task_release_of_when_all_and_its_inputs_while_pending_is_safe)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    park_task_t *ts[3], *mine[3];
    make_tasks(ts, 3);
    for (int i = 0; i < 3; i++)
        mine[i] = park_task_retain(ts[i]);
    park_task_t *all = park_task_when_all(pool, ts, 3);
    ASSERT_TRUE(all != NULL);
    struct cont c;
    cont_init(&c, pool, all);
    then(all, &c);
    park_task_release(all);
    release_tasks(ts, 3); /* only `mine` and when_all's own references remain */
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(park_task_complete(mine[i], i == 1 ? EIO : 0, NULL), 0);
        park_task_release(mine[i]);
    }
    struct decoys d;
    decoys_place(&d);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&c.runs), 1);
    ASSERT_EQ(c.err, EIO);
    decoys_check_and_release(&d);
}

TEST(task_release_of_when_any_and_its_inputs_while_pending_is_safe)
{
    park_pool_t *pool = pool_new(1);
    struct gate g;
    gate_close(&g, pool);
    park_task_t *ts[3], *mine[3];
    make_tasks(ts, 3);
    for (int i = 0; i < 3; i++)
        mine[i] = park_task_retain(ts[i]);
    park_task_t *any = park_task_when_any(pool, ts, 3);
    ASSERT_TRUE(any != NULL);
    struct cont c;
    cont_init(&c, pool, any);
    then(any, &c);
    park_task_release(any);
    release_tasks(ts, 3);
    ASSERT_EQ(park_task_complete(mine[1], EIO, NULL), 0);
    park_task_release(mine[1]);
    struct decoys d;
    decoys_place(&d);
    /* The others complete after when_any has completed and been released. */
    ASSERT_EQ(park_task_complete(mine[0], 0, NULL), 0);
    ASSERT_EQ(park_task_cancel(mine[2]), 0);
    park_task_release(mine[0]);
    park_task_release(mine[2]);
    gate_open(&g);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&c.runs), 1);
    ASSERT_EQ(c.err, 0);
    ASSERT_EQ((uintptr_t)c.result, 1);
    decoys_check_and_release(&d);
}

TEST(task_release_of_an_armed_delay_is_safe)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *d = park_task_delay(pool, 2 * MS);
    ASSERT_TRUE(d != NULL);
    struct cont c;
    cont_init(&c, pool, d);
    then(d, &c);
    park_task_release(d);
    park_task_t *bare = park_task_delay(pool, MS); /* no continuation either */
    ASSERT_TRUE(bare != NULL);
    park_task_release(bare); /* only the timer holds it */
    struct decoys decoys;
    decoys_place(&decoys);
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, 0);
    test_sleep_ns(5 * MS); /* choreography: the bare delay expires too */
    park_pool_destroy(pool);
    decoys_check_and_release(&decoys);
}

TEST(task_release_of_a_task_with_an_armed_deadline_is_safe)
{
    park_pool_t *pool = pool_new(1);
    /* Expires while nobody else holds the task. */
    park_task_t *t = task_new();
    ASSERT_EQ(park_task_cancel_at_on(t, pool, park_deadline_in(2 * MS)), 0);
    park_task_release(t);
    /* Completed and released long before its deadline; destroy drops it. */
    park_task_t *u = task_new();
    ASSERT_EQ(park_task_cancel_at_on(u, pool, park_deadline_in(3600 * (uint64_t)1000000000u)), 0);
    ASSERT_EQ(park_task_complete(u, 0, NULL), 0);
    park_task_release(u);
    struct decoys d;
    decoys_place(&d);
    test_sleep_ns(10 * MS); /* choreography: the first deadline passes */
    park_pool_destroy(pool);
    decoys_check_and_release(&d);
}

/* ---- misuse ---------------------------------------------------------------------------- */

static int never_run(void *arg, void **result)
{
    (void)result;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

TEST(task_run_of_a_null_function_or_on_a_null_pool_is_a_task_completed_with_einval)
{
    park_pool_t *pool = pool_new(1);
    atomic_int runs = 0;
    park_task_t *t = park_task_run(pool, NULL, &runs);
    ASSERT_TRUE(t != NULL);
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), EINVAL);
    park_task_release(t);
    t = park_task_run(NULL, never_run, &runs);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_wait(t, NULL), EINVAL);
    park_task_release(t);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&runs), 0);
}

static void never_cont(park_task_t *done, void *arg)
{
    (void)done;
    atomic_fetch_add((atomic_int *)arg, 1);
}

TEST(task_then_with_a_null_function_or_pool_is_einval_and_registers_nothing)
{
    park_pool_t *pool = pool_new(1);
    atomic_int runs = 0;
    park_task_t *t = park_task_new();
    ASSERT_EQ(park_task_then(t, pool, NULL, &runs), EINVAL);
    ASSERT_EQ(park_task_then(t, NULL, never_cont, &runs), EINVAL);
    ASSERT_EQ(park_task_complete(t, 0, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&runs), 0);
}

TEST(task_complete_with_a_negative_error_is_einval_and_leaves_the_task_pending)
{
    park_task_t *t = park_task_new();
    int token;
    ASSERT_EQ(park_task_complete(t, -1, &token), EINVAL);
    ASSERT_EQ(park_task_complete(t, -EIO, &token), EINVAL);
    ASSERT_FALSE(park_task_done(t));
    ASSERT_EQ(park_task_complete(t, EIO, &token), 0);
    void *v = NULL;
    ASSERT_EQ(park_task_result(t, &v), EIO);
    ASSERT_TRUE(v == &token);
    park_task_release(t);
}

TEST(task_complete_with_einprogress_is_einval_and_leaves_the_task_pending)
{
    park_task_t *t = park_task_new();
    ASSERT_EQ(park_task_complete(t, EINPROGRESS, NULL), EINVAL);
    ASSERT_FALSE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), EINPROGRESS);
    ASSERT_EQ(park_task_complete(t, 0, NULL), 0);
    ASSERT_EQ(park_task_result(t, NULL), 0);
    park_task_release(t);
}

TEST(task_complete_with_a_bad_error_on_a_completed_task_is_einval)
{
    park_task_t *t = park_task_new();
    ASSERT_EQ(park_task_complete(t, 0, NULL), 0);
    ASSERT_EQ(park_task_complete(t, -1, NULL), EINVAL);
    ASSERT_EQ(park_task_result(t, NULL), 0);
    park_task_release(t);
}

TEST(task_delay_without_a_pool_is_a_task_completed_with_einval)
{
    park_task_t *t = park_task_delay(NULL, MS);
    ASSERT_TRUE(t != NULL);
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), EINVAL);
    park_task_release(t);
}

TEST(task_when_all_and_when_any_without_a_pool_or_tasks_are_completed_with_einval)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *in = park_task_new();
    park_task_t *const ins[] = {in};
    park_task_t *r[] = {
        park_task_when_all(NULL, ins, 1),
        park_task_when_any(NULL, ins, 1),
        park_task_when_all(pool, NULL, 1),
        park_task_when_any(pool, NULL, 1),
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        ASSERT_TRUE(r[i] != NULL);
        ASSERT_TRUE(park_task_done(r[i]));
        ASSERT_EQ(park_task_result(r[i], NULL), EINVAL);
        park_task_release(r[i]);
    }
    ASSERT_EQ(park_task_complete(in, 0, NULL), 0);
    park_task_release(in);
    park_pool_destroy(pool);
}

/* ---- PARK_DEBUG: a released task is caught at its next use -------------------------- */

#ifdef PARK_DEBUG
static void release_twice(void *arg)
{
    (void)arg;
    park_task_t *t = park_task_new();
    park_task_release(t);
    park_task_release(t);
}

TEST(task_release_twice_aborts_with_a_message_naming_park_task_release)
{
    test_expect_misuse(release_twice, NULL, "park_task_release(", "use-after-poison");
    test_expect_misuse(release_twice, NULL, "was released", "use-after-poison");
}

/* The block of a released task is not the next one handed out, so the
 * second release still meets a released task, not the new one. */
static void release_twice_around_a_new_task(void *arg)
{
    (void)arg;
    park_task_t *t = park_task_new();
    park_task_release(t);
    park_task_t *u = park_task_new();
    if (u == t)
        _exit(3); /* the quarantine did not hold t back */
    park_task_release(t);
}

TEST(task_release_twice_with_a_new_task_in_between_still_aborts)
{
    test_expect_misuse(release_twice_around_a_new_task, NULL, "park_task_release(",
                       "use-after-poison");
}

static void wait_after_release(void *arg)
{
    (void)arg;
    park_task_t *t = park_task_new();
    park_task_complete(t, 0, NULL);
    park_task_release(t);
    park_task_wait(t, NULL);
}

TEST(task_wait_after_release_aborts_with_a_message_naming_park_task_wait)
{
    test_expect_misuse(wait_after_release, NULL, "park_task_wait(", "use-after-poison");
}

static void result_after_release(void *arg)
{
    (void)arg;
    park_task_t *t = park_task_new();
    park_task_complete(t, EIO, NULL);
    park_task_release(t);
    park_task_result(t, NULL);
}

TEST(task_result_after_release_aborts_with_a_message_naming_park_task_result)
{
    test_expect_misuse(result_after_release, NULL, "park_task_result(", "use-after-poison");
}

static void nothing_cont(park_task_t *done, void *arg)
{
    (void)done;
    (void)arg;
}

static void then_after_release(void *pool)
{
    park_task_t *t = park_task_new();
    park_task_release(t);
    park_task_then(t, pool, nothing_cont, NULL);
}

TEST(task_then_after_release_aborts_with_a_message_naming_park_task_then)
{
    /* Made here: the forked child may not start threads (TSan); it aborts
     * before it would use the pool. */
    park_pool_t *pool = pool_new(1);
    test_expect_misuse(then_after_release, pool, "park_task_then(", "use-after-poison");
    park_pool_destroy(pool);
}

#endif

static const test_case_t tests[] = {
    TEST_ENTRY(task_new_is_pending),
    TEST_ENTRY(task_release_of_null_does_nothing),
    TEST_ENTRY(task_continuation_queued_by_a_worker_runs_next_on_that_worker),
    TEST_ENTRY(task_continuation_chain_on_a_worker_does_not_starve_its_queue),
    TEST_ENTRY(task_continuation_chain_on_a_worker_does_not_starve_outside_submissions),
    TEST_ENTRY(task_continuation_queued_by_a_job_that_then_blocks_runs_on_another_worker),
    TEST_ENTRY(task_continuations_completed_by_one_job_start_in_order_on_its_worker),
    TEST_ENTRY(task_continuations_held_back_by_a_long_one_move_to_another_worker),
    TEST_ENTRY(task_continuations_of_a_job_that_then_blocks_run_on_another_worker),
    TEST_ENTRY(task_complete_sets_the_error_and_result),
    TEST_ENTRY(task_result_is_einprogress_then_the_error),
    TEST_ENTRY(task_complete_twice_is_ealready_and_keeps_the_first),
    TEST_ENTRY(task_cancel_completes_with_ecanceled),
    TEST_ENTRY(task_retain_returns_the_task_and_keeps_it_alive),
    TEST_ENTRY(task_continuation_runs_on_the_pool_after_completion),
    TEST_ENTRY(task_continuation_never_runs_within_complete),
    TEST_ENTRY(task_continuation_never_runs_within_cancel),
    TEST_ENTRY(task_continuation_never_runs_within_complete_on_a_worker),
    TEST_ENTRY(task_then_on_a_completed_task_runs_the_continuation_later),
    TEST_ENTRY(task_then_on_a_completed_task_from_a_worker_runs_the_continuation_later),
    TEST_ENTRY(task_continuation_for_another_pool_runs_there_when_completed_on_a_worker),
    TEST_ENTRY(task_then_within_a_continuation_queues_the_new_one),
    TEST_ENTRY(task_many_continuations_each_run_once),
    TEST_ENTRY(task_continuations_before_and_after_completion_run_on_their_own_pools),
    TEST_ENTRY(task_run_runs_fn_on_the_pool_and_delivers_its_error_and_result),
    TEST_ENTRY(task_run_whose_fn_sets_no_result_gives_null),
    TEST_ENTRY(task_run_cancelled_before_it_starts_never_runs_fn),
    TEST_ENTRY(task_run_completed_by_hand_before_it_starts_never_runs_fn),
    TEST_ENTRY(task_wait_from_outside_returns_when_another_thread_completes),
    TEST_ENTRY(task_wait_on_a_completed_task_returns_at_once),
    TEST_ENTRY(task_wait_on_a_worker_runs_other_work_instead_of_deadlocking),
    TEST_ENTRY(task_wait_on_a_worker_runs_the_submission_that_completes_the_task),
    TEST_ENTRY(task_wait_on_the_only_worker_runs_work_submitted_from_outside_while_it_sleeps),
    TEST_ENTRY(task_wait_on_a_worker_returns_when_an_outside_thread_completes),
    TEST_ENTRY(task_wait_until_on_a_worker_times_out_not_before_the_deadline),
    TEST_ENTRY(task_wait_on_a_worker_for_a_task_of_another_pool),
    TEST_ENTRY(task_wait_on_a_worker_for_a_delay_of_its_own_pool),
    TEST_ENTRY(task_wait_until_a_deadline_on_a_pending_task_is_etimedout_not_before_it),
    TEST_ENTRY(task_wait_until_returns_the_error_of_a_task_that_completes_in_time),
    TEST_ENTRY(task_wait_until_etimedout_is_told_apart_by_result),
    TEST_ENTRY(task_when_all_completes_with_0_once_all_succeed),
    TEST_ENTRY(task_when_all_completes_with_the_first_error),
    TEST_ENTRY(task_when_all_of_completed_tasks_completes),
    TEST_ENTRY(task_when_all_of_no_tasks_is_completed_with_0),
    TEST_ENTRY(task_when_any_gives_the_index_of_the_first_completed),
    TEST_ENTRY(task_when_any_with_a_completed_input_gives_its_index),
    TEST_ENTRY(task_when_all_and_when_any_continuations_never_run_within_the_completing_call),
    TEST_ENTRY(task_when_any_of_no_tasks_is_completed_with_einval),
    TEST_ENTRY(task_delay_is_never_early),
    TEST_ENTRY(task_many_armed_delays_are_each_never_early),
    TEST_ENTRY(task_cancel_at_completes_a_pending_task_with_etimedout_not_before_the_deadline),
    TEST_ENTRY(task_cancel_at_a_past_deadline_completes_the_task_with_etimedout),
    TEST_ENTRY(task_cancel_at_on_a_completed_task_is_ealready),
    TEST_ENTRY(task_cancel_at_on_a_task_without_pool_is_einval),
    TEST_ENTRY(task_cancel_at_of_a_run_task_uses_its_pool),
    TEST_ENTRY(task_cancel_at_completed_before_the_deadline_keeps_the_result),
    TEST_ENTRY(task_then_on_a_pool_shutting_down_is_epipe_and_never_runs),
    TEST_ENTRY(task_run_on_a_pool_shutting_down_is_completed_with_epipe),
    TEST_ENTRY(task_delay_on_a_pool_shutting_down_is_completed_with_epipe),
    TEST_ENTRY(task_cancel_at_on_a_pool_shutting_down_is_epipe),
    TEST_ENTRY(task_pool_destroy_completes_armed_delays_with_ecanceled),
    TEST_ENTRY(task_pool_destroy_completes_tasks_with_armed_deadlines_with_ecanceled),
    TEST_ENTRY(task_pool_destroy_cancels_a_delay_and_a_deadline_that_are_never_due),
    TEST_ENTRY(task_pool_destroy_runs_continuations_of_tasks_completed_before),
    TEST_ENTRY(task_release_of_a_run_task_before_it_runs_still_runs_it),
    TEST_ENTRY(task_release_before_completion_keeps_the_task_for_its_continuation),
    TEST_ENTRY(task_release_after_completion_before_continuations_run_is_safe),
    TEST_ENTRY(task_release_of_a_completed_task_with_a_late_continuation_is_safe),
    TEST_ENTRY(task_continuation_may_retain_the_task_beyond_its_call),
    TEST_ENTRY(task_release_of_when_all_and_its_inputs_while_pending_is_safe),
    TEST_ENTRY(task_release_of_when_any_and_its_inputs_while_pending_is_safe),
    TEST_ENTRY(task_release_of_an_armed_delay_is_safe),
    TEST_ENTRY(task_release_of_a_task_with_an_armed_deadline_is_safe),
    TEST_ENTRY(task_complete_racing_cancel_completes_exactly_once),
    TEST_ENTRY(task_run_of_a_null_function_or_on_a_null_pool_is_a_task_completed_with_einval),
    TEST_ENTRY(task_then_with_a_null_function_or_pool_is_einval_and_registers_nothing),
    TEST_ENTRY(task_complete_with_a_negative_error_is_einval_and_leaves_the_task_pending),
    TEST_ENTRY(task_complete_with_einprogress_is_einval_and_leaves_the_task_pending),
    TEST_ENTRY(task_complete_with_a_bad_error_on_a_completed_task_is_einval),
    TEST_ENTRY(task_delay_without_a_pool_is_a_task_completed_with_einval),
    TEST_ENTRY(task_when_all_and_when_any_without_a_pool_or_tasks_are_completed_with_einval),
#ifdef PARK_DEBUG
    TEST_ENTRY(task_release_twice_aborts_with_a_message_naming_park_task_release),
    TEST_ENTRY(task_release_twice_with_a_new_task_in_between_still_aborts),
    TEST_ENTRY(task_wait_after_release_aborts_with_a_message_naming_park_task_wait),
    TEST_ENTRY(task_result_after_release_aborts_with_a_message_naming_park_task_result),
    TEST_ENTRY(task_then_after_release_aborts_with_a_message_naming_park_task_then),
#endif
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
