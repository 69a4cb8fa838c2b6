/* tests/stress/lin_check.c: random histories checked for linearizability.
 *
 * The idea of Lincheck and of Knossos, in C. Each round runs a short random
 * program on 2 or 3 threads against one fresh object (a counting
 * semaphore, a bounded channel, a mutex guarding a plain counter), records
 * every operation's invocation and response on one global clock (a ticket
 * taken before the call and after it) with its arguments and result, and
 * then searches for a sequential order that respects real time (an
 * operation that responded before another was invoked comes first) and
 * that the object's sequential specification accepts (Wing and Gong's
 * search: try each operation invoked before the earliest pending response,
 * backtrack; memoised on the set of operations done and the specification's
 * state). A history with no such order is printed in full and
 * fails the test.
 *
 * Operations are non-blocking or bounded (try-operations, deadlines passed
 * or a few microseconds away, a lock held for a few steps), so every
 * history is finite. The first tests feed the checker hand-made histories,
 * linearizable and not, so it is known to be able to fail. Rounds scale
 * with PARK_STRESS_SCALE; the harness watchdog bounds every test. */
#include <park/park.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "test.h"

#define LIN_THREADS 3
#define LIN_OPS_PER_THREAD 12
#define LIN_MAX_OPS (LIN_THREADS * LIN_OPS_PER_THREAD) /* fits the 64-bit done set */
#define LIN_SHORT_NS (20u * US)                        /* a deadline "a few microseconds away" */

/* ---- histories ------------------------------------------------------------------------- */

enum lin_kind {
    SEM_TRY,      /* park_sem_try_acquire: result 1 or 0 */
    SEM_UNTIL,    /* park_sem_acquire_until, arg 0: deadline passed, 1: short; result rc */
    SEM_RELEASE,  /* park_sem_release(arg): result rc */
    CH_TRY_SEND,  /* park_chan_try_send(arg): result rc */
    CH_SEND_PAST, /* park_chan_send_until(arg, passed deadline): result rc */
    CH_TRY_RECV,  /* park_chan_try_recv: result rc, value the item */
    CH_RECV_PAST, /* park_chan_recv_until(passed deadline): result rc, value the item */
    CH_CLOSE,     /* park_chan_close */
    MX_LOCK,      /* park_mutex_lock */
    MX_TRY_LOCK,  /* park_mutex_try_lock: result 1 or 0 */
    MX_UNTIL,     /* park_mutex_lock_until, arg as SEM_UNTIL: result rc */
    MX_RMW,       /* under the lock: value = counter; counter = value + 1 */
    MX_UNLOCK,    /* park_mutex_unlock */
};

static const char *const kind_names[] = {
    [SEM_TRY] = "sem_try_acquire",      [SEM_UNTIL] = "sem_acquire_until",
    [SEM_RELEASE] = "sem_release",      [CH_TRY_SEND] = "chan_try_send",
    [CH_SEND_PAST] = "chan_send_until", [CH_TRY_RECV] = "chan_try_recv",
    [CH_RECV_PAST] = "chan_recv_until", [CH_CLOSE] = "chan_close",
    [MX_LOCK] = "mutex_lock",           [MX_TRY_LOCK] = "mutex_try_lock",
    [MX_UNTIL] = "mutex_lock_until",    [MX_RMW] = "counter_rmw",
    [MX_UNLOCK] = "mutex_unlock",
};

struct lin_op {
    uint8_t thread, kind;
    uint32_t arg;
    int result;
    uint32_t value;
    uint64_t inv, resp; /* tickets of the global clock */
};

struct lin_history {
    const char *object;
    uint32_t param;  /* semaphore: max; channel: capacity */
    uint64_t state0; /* the specification's initial state */
    unsigned n;
    struct lin_op ops[LIN_MAX_OPS];
};

static atomic_uint_fast64_t lin_clock;

static uint64_t stamp(void)
{
    return atomic_fetch_add(&lin_clock, 1);
}

/* Runs `call` between two tickets of the global clock into *op. */
#define RECORD(op, call)                                                                           \
    do {                                                                                           \
        (op)->inv = stamp();                                                                       \
        call;                                                                                      \
        (op)->resp = stamp();                                                                      \
    } while (0)

static const char *rc_name(int rc)
{
    switch (rc) {
    case 0:
        return "0";
    case EAGAIN:
        return "EAGAIN";
    case ETIMEDOUT:
        return "ETIMEDOUT";
    case EPIPE:
        return "EPIPE";
    case EOVERFLOW:
        return "EOVERFLOW";
    default:
        return "?";
    }
}

static void print_op(FILE *f, const struct lin_op *op)
{
    char args[32] = "", result[48];
    switch (op->kind) {
    case SEM_UNTIL:
    case MX_UNTIL:
        snprintf(args, sizeof args, "%s", op->arg ? "now+20us" : "passed");
        break;
    case SEM_RELEASE:
    case CH_TRY_SEND:
    case CH_SEND_PAST:
        snprintf(args, sizeof args, "%" PRIu32, op->arg);
        break;
    default:
        break;
    }
    switch (op->kind) {
    case SEM_TRY:
    case MX_TRY_LOCK:
        snprintf(result, sizeof result, "%s", op->result ? "true" : "false");
        break;
    case CH_TRY_RECV:
    case CH_RECV_PAST:
        if (op->result == 0)
            snprintf(result, sizeof result, "0, item %" PRIu32, op->value);
        else
            snprintf(result, sizeof result, "%s", rc_name(op->result));
        break;
    case MX_RMW:
        snprintf(result, sizeof result, "read %" PRIu32, op->value);
        break;
    case CH_CLOSE:
    case MX_LOCK:
    case MX_UNLOCK:
        snprintf(result, sizeof result, "-");
        break;
    default:
        snprintf(result, sizeof result, "%s", rc_name(op->result));
        break;
    }
    char call[64];
    snprintf(call, sizeof call, "%s(%s)", kind_names[op->kind], args);
    fprintf(f, "    thread %u  %-28s -> %-14s  [%" PRIu64 ", %" PRIu64 "]\n", op->thread, call,
            result, op->inv, op->resp);
}

static void print_history(FILE *f, const struct lin_history *h)
{
    fprintf(f, "  %s history (param %" PRIu32 ", initial state %#" PRIx64 "), ops by invocation:\n",
            h->object, h->param, h->state0);
    bool printed[LIN_MAX_OPS] = {false};
    for (unsigned k = 0; k < h->n; k++) {
        unsigned first = h->n;
        for (unsigned i = 0; i < h->n; i++)
            if (!printed[i] && (first == h->n || h->ops[i].inv < h->ops[first].inv))
                first = i;
        printed[first] = true;
        print_op(f, &h->ops[first]);
    }
}

/* ---- sequential specifications -------------------------------------------------------- */

/* A specification: from `state`, is `op` with its recorded result
 * possible? If so, *next is the state after it. */
typedef bool lin_spec_fn(const struct lin_history *h, uint64_t state, const struct lin_op *op,
                         uint64_t *next);

/* Semaphore: the state is the count; h->param the maximum. */
static bool sem_spec(const struct lin_history *h, uint64_t count, const struct lin_op *op,
                     uint64_t *next)
{
    *next = count;
    switch (op->kind) {
    case SEM_TRY:
        if (count == 0)
            return op->result == 0;
        *next = count - 1;
        return op->result == 1;
    case SEM_UNTIL:
        if (count == 0)
            return op->result == ETIMEDOUT;
        *next = count - 1;
        return op->result == 0;
    case SEM_RELEASE:
        if (count + op->arg > h->param)
            return op->result == EOVERFLOW;
        *next = count + op->arg;
        return op->result == 0;
    default:
        return false;
    }
}

/* Channel: the state packs the number of items (bits 0-3), the closed flag
 * (bit 4) and the items, oldest first, 8 bits each from bit 8. */
#define CH_COUNT(s) ((unsigned)((s)&15u))
#define CH_CLOSED 16u
#define CH_ITEM(s, i) ((uint32_t)((s) >> (8 + 8 * (i))) & 255u)

static bool chan_spec(const struct lin_history *h, uint64_t s, const struct lin_op *op,
                      uint64_t *next)
{
    unsigned n = CH_COUNT(s);
    *next = s;
    switch (op->kind) {
    case CH_TRY_SEND:
    case CH_SEND_PAST:
        if (s & CH_CLOSED)
            return op->result == EPIPE;
        if (n == h->param)
            return op->result == (op->kind == CH_TRY_SEND ? EAGAIN : ETIMEDOUT);
        *next = (s + 1) | (uint64_t)op->arg << (8 + 8 * n);
        return op->result == 0;
    case CH_TRY_RECV:
    case CH_RECV_PAST:
        if (n == 0) {
            if (s & CH_CLOSED)
                return op->result == EPIPE;
            return op->result == (op->kind == CH_TRY_RECV ? EAGAIN : ETIMEDOUT);
        }
        /* Drop the oldest item: shift the items down, keep the flags. */
        *next = ((s >> 16) << 8) | (s & CH_CLOSED) | (n - 1);
        return op->result == 0 && op->value == CH_ITEM(s, 0);
    case CH_CLOSE:
        *next = s | CH_CLOSED;
        return true;
    default:
        return false;
    }
}

/* Mutex and counter: the state packs the counter (bits 0-15) and the holder
 * (bits 16-23: 0 free, otherwise thread + 1). */
#define MX_COUNTER(s) ((uint32_t)((s)&0xffffu))
#define MX_HOLDER(s) ((unsigned)((s) >> 16))
#define MX_HELD_BY(s, t) (((s)&0xffffu) | (uint64_t)((t) + 1u) << 16)

static bool mutex_spec(const struct lin_history *h, uint64_t s, const struct lin_op *op,
                       uint64_t *next)
{
    (void)h;
    bool free_ = MX_HOLDER(s) == 0;
    *next = s;
    switch (op->kind) {
    case MX_LOCK:
        *next = MX_HELD_BY(s, op->thread);
        return free_;
    case MX_TRY_LOCK:
    case MX_UNTIL: {
        bool got = op->kind == MX_TRY_LOCK ? op->result == 1 : op->result == 0;
        if (!got)
            return !free_ && (op->kind == MX_TRY_LOCK || op->result == ETIMEDOUT);
        *next = MX_HELD_BY(s, op->thread);
        return free_;
    }
    case MX_RMW:
        *next = s + 1;
        return MX_HOLDER(s) == op->thread + 1u && op->value == MX_COUNTER(s);
    case MX_UNLOCK:
        *next = MX_COUNTER(s);
        return MX_HOLDER(s) == op->thread + 1u;
    default:
        return false;
    }
}

/* ---- the search ------------------------------------------------------------------------ */

/* Memo of (done set, state) pairs known to lead nowhere; entries of older
 * searches are told apart by their generation, so nothing is cleared. */
#define MEMO_SIZE (1u << 15)
#define MEMO_PROBES 32

struct memo_entry {
    uint64_t done, state;
    uint32_t gen;
};

struct lin_search {
    const struct lin_history *h;
    lin_spec_fn *spec;
    uint64_t all;
    uint32_t gen;
    uint64_t visited;
    struct memo_entry memo[MEMO_SIZE];
};

static size_t memo_slot(uint64_t done, uint64_t state)
{
    uint64_t x = done * 0x9e3779b97f4a7c15u ^ (state + 0x632be59bd9b4e019u) * 0xbf58476d1ce4e5b9u;
    return (size_t)(x ^ x >> 29) & (MEMO_SIZE - 1);
}

/* True if (done, state) is known to fail; otherwise, if `insert`, records
 * it (a full neighbourhood just forgets: only speed is lost). */
static bool memo_check(struct lin_search *s, uint64_t done, uint64_t state, bool insert)
{
    size_t i = memo_slot(done, state);
    for (unsigned p = 0; p < MEMO_PROBES; p++, i = (i + 1) & (MEMO_SIZE - 1)) {
        struct memo_entry *e = &s->memo[i];
        if (e->gen != s->gen) {
            if (insert)
                *e = (struct memo_entry){done, state, s->gen};
            return false;
        }
        if (e->done == done && e->state == state)
            return true;
    }
    return false;
}

static bool search(struct lin_search *s, uint64_t done, uint64_t state)
{
    if (done == s->all)
        return true;
    if (memo_check(s, done, state, false))
        return false;
    s->visited++;
    const struct lin_history *h = s->h;
    /* Only an operation invoked before every pending one has responded may
     * take effect next. */
    uint64_t min_resp = UINT64_MAX;
    for (unsigned i = 0; i < h->n; i++)
        if (!(done >> i & 1) && h->ops[i].resp < min_resp)
            min_resp = h->ops[i].resp;
    for (unsigned i = 0; i < h->n; i++) {
        uint64_t next;
        if (done >> i & 1 || h->ops[i].inv > min_resp)
            continue;
        if (s->spec(h, state, &h->ops[i], &next) && search(s, done | 1ull << i, next))
            return true;
    }
    memo_check(s, done, state, true);
    return false;
}

static struct lin_search *search_new(void)
{
    struct lin_search *s = calloc(1, sizeof *s);
    ASSERT_TRUE(s != NULL);
    return s;
}

static bool linearizable(struct lin_search *s, const struct lin_history *h, lin_spec_fn *spec)
{
    ASSERT_LE(h->n, LIN_MAX_OPS);
    s->h = h;
    s->spec = spec;
    s->all = h->n == 64 ? UINT64_MAX : (1ull << h->n) - 1;
    s->gen++;
    return search(s, 0, h->state0);
}

/* ---- the checker on hand-made histories ----------------------------------------------- */

#define OP(t, k, a, r, v, i, e)                                                                    \
    (struct lin_op)                                                                                \
    {                                                                                              \
        .thread = (t), .kind = (k), .arg = (a), .result = (r), .value = (v), .inv = (i),           \
        .resp = (e)                                                                                \
    }

static bool check_ops(const char *object, uint32_t param, uint64_t state0, lin_spec_fn *spec,
                      const struct lin_op *ops, unsigned n)
{
    struct lin_history h = {.object = object, .param = param, .state0 = state0, .n = n};
    memcpy(h.ops, ops, n * sizeof ops[0]);
    struct lin_search *s = search_new();
    bool ok = linearizable(s, &h, spec);
    free(s);
    return ok;
}

TEST(lin_checker_rejects_two_try_acquires_of_one_permit)
{
    /* One permit, no release: two successful try_acquires, one after the
     * other and overlapping. */
    struct lin_op seq[] = {OP(0, SEM_TRY, 0, 1, 0, 1, 2), OP(1, SEM_TRY, 0, 1, 0, 3, 4)};
    struct lin_op overlap[] = {OP(0, SEM_TRY, 0, 1, 0, 1, 4), OP(1, SEM_TRY, 0, 1, 0, 2, 3)};
    ASSERT_FALSE(check_ops("sem", 1, 1, sem_spec, seq, 2));
    ASSERT_FALSE(check_ops("sem", 1, 1, sem_spec, overlap, 2));
}

TEST(lin_checker_accepts_a_release_overlapping_two_try_acquires)
{
    /* The release must take effect between the two acquisitions. */
    struct lin_op ops[] = {OP(0, SEM_TRY, 0, 1, 0, 1, 4), OP(1, SEM_TRY, 0, 1, 0, 2, 6),
                           OP(2, SEM_RELEASE, 1, 0, 0, 3, 5)};
    ASSERT_TRUE(check_ops("sem", 1, 1, sem_spec, ops, 3));
}

TEST(lin_checker_rejects_a_failed_try_acquire_with_a_permit_free_throughout)
{
    struct lin_op ops[] = {OP(0, SEM_RELEASE, 1, 0, 0, 1, 2), OP(1, SEM_TRY, 0, 0, 0, 3, 4)};
    ASSERT_FALSE(check_ops("sem", 2, 0, sem_spec, ops, 2));
}

TEST(lin_checker_rejects_items_received_out_of_order)
{
    struct lin_op ops[] = {OP(0, CH_TRY_SEND, 1, 0, 0, 1, 2), OP(0, CH_TRY_SEND, 2, 0, 0, 3, 4),
                           OP(1, CH_TRY_RECV, 0, 0, 2, 5, 6), OP(1, CH_TRY_RECV, 0, 0, 1, 7, 8)};
    ASSERT_FALSE(check_ops("chan", 2, 0, chan_spec, ops, 4));
    /* The same receives, overlapping the sends, are fine the right way round. */
    struct lin_op fine[] = {OP(0, CH_TRY_SEND, 1, 0, 0, 1, 4), OP(0, CH_TRY_SEND, 2, 0, 0, 5, 8),
                            OP(1, CH_TRY_RECV, 0, 0, 1, 2, 6), OP(1, CH_TRY_RECV, 0, 0, 2, 7, 9)};
    ASSERT_TRUE(check_ops("chan", 2, 0, chan_spec, fine, 4));
}

TEST(lin_checker_rejects_two_holders_reading_the_same_count)
{
    struct lin_op ops[] = {OP(0, MX_LOCK, 0, 0, 0, 1, 2),    OP(1, MX_TRY_LOCK, 0, 1, 0, 3, 4),
                           OP(0, MX_RMW, 0, 0, 0, 5, 6),     OP(1, MX_RMW, 0, 0, 0, 7, 8),
                           OP(0, MX_UNLOCK, 0, 0, 0, 9, 10), OP(1, MX_UNLOCK, 0, 0, 0, 11, 12)};
    ASSERT_FALSE(check_ops("mutex", 0, 0, mutex_spec, ops, 6));
    /* Overlapping, in the right order, they are fine. */
    struct lin_op fine[] = {OP(0, MX_LOCK, 0, 0, 0, 1, 2),  OP(1, MX_LOCK, 0, 0, 0, 3, 9),
                            OP(0, MX_RMW, 0, 0, 0, 4, 5),   OP(0, MX_UNLOCK, 0, 0, 0, 6, 7),
                            OP(1, MX_RMW, 0, 0, 1, 10, 11), OP(1, MX_UNLOCK, 0, 0, 0, 12, 13)};
    ASSERT_TRUE(check_ops("mutex", 0, 0, mutex_spec, fine, 6));
}

/* ---- running random histories ---------------------------------------------------------- */

/* One kind of object: a fresh one per round (setup, from the round's
 * randomness; teardown), and the random program of one thread. */
struct lin_object {
    const char *name;
    lin_spec_fn *spec;
    void (*setup)(struct lin_history *h, uint64_t *rng);
    void (*thread)(unsigned t, uint64_t *rng, struct lin_op *ops, unsigned *n);
    void (*teardown)(void);
};

struct lin_run {
    const struct lin_object *obj;
    pthread_barrier_t go, done;
    atomic_bool stop;
    unsigned active;     /* threads taking part in this round */
    atomic_uint arrived; /* the start line: taking part and past the barrier */
    struct lin_op ops[LIN_THREADS][LIN_OPS_PER_THREAD];
    unsigned n[LIN_THREADS];
};

struct lin_worker {
    struct lin_run *r;
    unsigned id;
};

/* Between operations a short random pause, one time in four a yield, to
 * vary the interleavings. */
static void jitter(uint64_t *rng)
{
    uint32_t r = test_rng_below(rng, 256);
    if (r < 64) {
        sched_yield();
        return;
    }
    for (volatile uint32_t i = 0; i < r; i++) {
    }
}

static park_time_t deadline_for(uint32_t arg)
{
    return arg ? park_deadline_in(LIN_SHORT_NS) : park_now() - 1;
}

static void *lin_worker_main(void *arg)
{
    struct lin_worker *w = arg;
    struct lin_run *r = w->r;
    uint64_t rng = test_rng_seed(w->id + 100);
    for (;;) {
        pthread_barrier_wait(&r->go);
        if (atomic_load(&r->stop))
            return NULL;
        r->n[w->id] = 0;
        if (w->id < r->active) {
            /* Leave the barrier's wake-ups behind: start together. */
            atomic_fetch_add(&r->arrived, 1);
            for (unsigned spins = 1; atomic_load(&r->arrived) < r->active; spins++)
                if (spins % 64 == 0)
                    sched_yield(); /* more threads than free CPUs */
            r->obj->thread(w->id, &rng, r->ops[w->id], &r->n[w->id]);
        }
        pthread_barrier_wait(&r->done);
    }
}

/* True if operations of two threads overlap in time in h. */
static bool has_overlap(const struct lin_history *h)
{
    for (unsigned i = 0; i < h->n; i++)
        for (unsigned j = 0; j < h->n; j++)
            if (h->ops[i].thread != h->ops[j].thread && h->ops[i].inv < h->ops[j].inv &&
                h->ops[j].inv < h->ops[i].resp)
                return true;
    return false;
}

/* Runs `rounds` random histories on `obj` and checks each. */
static void lin_run_rounds(const struct lin_object *obj, uint64_t rounds)
{
    struct lin_run *r = calloc(1, sizeof *r);
    ASSERT_TRUE(r != NULL);
    r->obj = obj;
    ASSERT_EQ(pthread_barrier_init(&r->go, NULL, LIN_THREADS + 1), 0);
    ASSERT_EQ(pthread_barrier_init(&r->done, NULL, LIN_THREADS + 1), 0);
    struct lin_worker w[LIN_THREADS];
    for (unsigned i = 0; i < LIN_THREADS; i++)
        w[i] = (struct lin_worker){r, i};
    test_threads_t *t = test_threads_start(LIN_THREADS, lin_worker_main, w, sizeof w[0]);
    struct lin_search *s = search_new();
    struct lin_history h;
    uint64_t rng = test_rng_seed(7), ops = 0, concurrent = 0;
    for (uint64_t round = 0; round < rounds; round++) {
        memset(&h, 0, sizeof h);
        h.object = obj->name;
        obj->setup(&h, &rng);
        r->active = 2 + test_rng_below(&rng, LIN_THREADS - 1);
        atomic_store(&r->arrived, 0);
        pthread_barrier_wait(&r->go);
        pthread_barrier_wait(&r->done);
        obj->teardown();
        for (unsigned i = 0; i < LIN_THREADS; i++)
            for (unsigned k = 0; k < r->n[i]; k++)
                h.ops[h.n++] = r->ops[i][k];
        ops += h.n;
        concurrent += has_overlap(&h);
        if (!linearizable(s, &h, obj->spec)) {
            print_history(stderr, &h);
            test_fail(__FILE__, __LINE__, "%s history %" PRIu64 " is not linearizable (above)",
                      obj->name, round);
        }
    }
    atomic_store(&r->stop, true);
    pthread_barrier_wait(&r->go);
    test_threads_join(t);
    printf("     %" PRIu64 " %s histories (%" PRIu64
           " with operations of two threads overlapping), %" PRIu64 " operations, %" PRIu64
           " search states: all linearizable\n",
           rounds, obj->name, concurrent, ops, s->visited);
    free(s);
    pthread_barrier_destroy(&r->go);
    pthread_barrier_destroy(&r->done);
    free(r);
}

/* ---- the semaphore --------------------------------------------------------------------- */

static park_sem_t lin_sem;

static void sem_setup(struct lin_history *h, uint64_t *rng)
{
    h->param = 1 + test_rng_below(rng, 3);
    h->state0 = test_rng_below(rng, h->param + 1);
    bool fifo = test_rng_below(rng, 2);
    uint32_t max = h->param, initial = (uint32_t)h->state0;
    ASSERT_EQ(fifo ? park_sem_init_fifo(&lin_sem, initial, max)
                   : park_sem_init(&lin_sem, initial, max),
              0);
}

static void sem_thread(unsigned t, uint64_t *rng, struct lin_op *ops, unsigned *n)
{
    unsigned count = 3 + test_rng_below(rng, 6);
    for (unsigned k = 0; k < count; k++) {
        struct lin_op *op = &ops[(*n)++];
        *op = (struct lin_op){.thread = (uint8_t)t};
        switch (test_rng_below(rng, 5)) {
        case 0:
        case 1:
            op->kind = SEM_TRY;
            RECORD(op, op->result = park_sem_try_acquire(&lin_sem));
            break;
        case 2:
            op->kind = SEM_UNTIL;
            op->arg = test_rng_below(rng, 2);
            park_time_t deadline = deadline_for(op->arg);
            RECORD(op, op->result = park_sem_acquire_until(&lin_sem, deadline));
            break;
        default:
            op->kind = SEM_RELEASE;
            op->arg = 1 + test_rng_below(rng, 2);
            RECORD(op, op->result = park_sem_release(&lin_sem, op->arg));
            break;
        }
        jitter(rng);
    }
}

static void sem_teardown(void)
{
    ASSERT_EQ(park_sem_destroy(&lin_sem), 0);
}

static const struct lin_object sem_object = {"sem", sem_spec, sem_setup, sem_thread, sem_teardown};

TEST(lin_sem_histories_are_linearizable)
{
    lin_run_rounds(&sem_object, test_scaled(10000));
}

/* ---- the channel ----------------------------------------------------------------------- */

static park_chan_t *lin_chan;

static void chan_setup(struct lin_history *h, uint64_t *rng)
{
    h->param = 1 + test_rng_below(rng, 3);
    h->state0 = 0;
    ASSERT_EQ(park_chan_create(&lin_chan, h->param), 0);
}

static void chan_thread(unsigned t, uint64_t *rng, struct lin_op *ops, unsigned *n)
{
    unsigned count = 3 + test_rng_below(rng, 6);
    for (unsigned k = 0; k < count; k++) {
        struct lin_op *op = &ops[(*n)++];
        *op = (struct lin_op){.thread = (uint8_t)t};
        /* Items are unique in the history and never 0 (an empty slot). */
        uint32_t item = t * LIN_OPS_PER_THREAD + k + 1;
        void *got = NULL;
        switch (test_rng_below(rng, 20)) {
        case 0:
            op->kind = CH_CLOSE;
            RECORD(op, park_chan_close(lin_chan));
            break;
        case 1:
        case 2:
        case 3:
        case 4:
        case 5:
        case 6:
            op->kind = CH_TRY_SEND;
            op->arg = item;
            RECORD(op, op->result = park_chan_try_send(lin_chan, (void *)(uintptr_t)item));
            break;
        case 7:
        case 8:
        case 9:
            op->kind = CH_SEND_PAST;
            op->arg = item;
            park_time_t past = park_now() - 1;
            RECORD(op, op->result = park_chan_send_until(lin_chan, (void *)(uintptr_t)item, past));
            break;
        case 10:
        case 11:
        case 12:
        case 13:
        case 14:
        case 15:
            op->kind = CH_TRY_RECV;
            RECORD(op, op->result = park_chan_try_recv(lin_chan, &got));
            break;
        default:
            op->kind = CH_RECV_PAST;
            park_time_t passed = park_now() - 1;
            RECORD(op, op->result = park_chan_recv_until(lin_chan, &got, passed));
            break;
        }
        op->value = (uint32_t)(uintptr_t)got;
        jitter(rng);
    }
}

static void chan_teardown(void)
{
    ASSERT_EQ(park_chan_destroy(lin_chan), 0);
    lin_chan = NULL;
}

static const struct lin_object chan_object = {"chan", chan_spec, chan_setup, chan_thread,
                                              chan_teardown};

TEST(lin_chan_histories_are_linearizable)
{
    lin_run_rounds(&chan_object, test_scaled(10000));
}

/* ---- the mutex and its counter --------------------------------------------------------- */

static park_mutex_t lin_mutex = PARK_MUTEX_INIT;
static uint32_t lin_counter; /* plain: only the mutex orders its accesses */

static void mutex_setup(struct lin_history *h, uint64_t *rng)
{
    (void)rng;
    lin_counter = 0;
    h->param = 0;
    h->state0 = 0;
}

/* Rounds of: lock by one of the calls; if locked, one or two
 * read-modify-writes of the counter, then unlock. */
static void mutex_thread(unsigned t, uint64_t *rng, struct lin_op *ops, unsigned *n)
{
    unsigned rounds = 1 + test_rng_below(rng, 3);
    for (unsigned k = 0; k < rounds; k++) {
        struct lin_op *op = &ops[(*n)++];
        *op = (struct lin_op){.thread = (uint8_t)t};
        bool locked = true;
        switch (test_rng_below(rng, 4)) {
        case 0:
            op->kind = MX_LOCK;
            RECORD(op, park_mutex_lock(&lin_mutex));
            break;
        case 1:
            op->kind = MX_TRY_LOCK;
            RECORD(op, op->result = park_mutex_try_lock(&lin_mutex));
            locked = op->result;
            break;
        default:
            op->kind = MX_UNTIL;
            op->arg = test_rng_below(rng, 2);
            park_time_t deadline = deadline_for(op->arg);
            RECORD(op, op->result = park_mutex_lock_until(&lin_mutex, deadline));
            locked = op->result == 0;
            break;
        }
        if (!locked) {
            jitter(rng);
            continue;
        }
        unsigned rmws = 1 + test_rng_below(rng, 2);
        for (unsigned i = 0; i < rmws; i++) {
            op = &ops[(*n)++];
            *op = (struct lin_op){.thread = (uint8_t)t, .kind = MX_RMW};
            RECORD(op, op->value = lin_counter; lin_counter = op->value + 1);
            jitter(rng);
        }
        op = &ops[(*n)++];
        *op = (struct lin_op){.thread = (uint8_t)t, .kind = MX_UNLOCK};
        RECORD(op, park_mutex_unlock(&lin_mutex));
        jitter(rng);
    }
}

static void mutex_teardown(void)
{
    ASSERT_EQ(park_mutex_destroy(&lin_mutex), 0);
}

static const struct lin_object mutex_object = {"mutex", mutex_spec, mutex_setup, mutex_thread,
                                               mutex_teardown};

TEST(lin_mutex_counter_histories_are_linearizable)
{
    lin_run_rounds(&mutex_object, test_scaled(8000));
}

static const test_case_t tests[] = {
    TEST_ENTRY(lin_checker_rejects_two_try_acquires_of_one_permit),
    TEST_ENTRY(lin_checker_accepts_a_release_overlapping_two_try_acquires),
    TEST_ENTRY(lin_checker_rejects_a_failed_try_acquire_with_a_permit_free_throughout),
    TEST_ENTRY(lin_checker_rejects_items_received_out_of_order),
    TEST_ENTRY(lin_checker_rejects_two_holders_reading_the_same_count),
    TEST_ENTRY(lin_sem_histories_are_linearizable),
    TEST_ENTRY(lin_chan_histories_are_linearizable),
    TEST_ENTRY(lin_mutex_counter_histories_are_linearizable),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
