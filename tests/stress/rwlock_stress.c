/* tests/stress/rwlock_stress.c: park_rwlock under many threads.
 *
 * Oracles (tests/TESTING.md): a writer sees no reader and no other writer
 * inside, a reader sees no writer and consistent data (plain accesses, so
 * TSan reports any overlap too); every thread makes progress; a stream of
 * writers cannot keep a reader out, nor overlapping readers a writer; timed
 * writers that give up strand nobody; the next holder may free the lock at
 * once. Every loop is bounded by an iteration count (scaled by
 * PARK_STRESS_SCALE) and by the harness watchdog; nothing asserts on
 * elapsed milliseconds except the generous one-second bounds on the worst
 * wait. */
#include <park/park.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"
#include "wait/wait.h" /* white box: park__wait_has_waiters */

/* Built a second time with PARK_TEST_READ_MOSTLY (rwlock_stress_read_mostly):
 * every lock of these tests is then a read-mostly lock (park_rwlock_init_
 * read_mostly), which must keep every guarantee of the plain mode. */
#ifdef PARK_TEST_READ_MOSTLY
#undef PARK_RWLOCK_INIT
#define PARK_RWLOCK_INIT PARK_RWLOCK_INIT_READ_MOSTLY
#define park_rwlock_init park_rwlock_init_read_mostly
#endif

static void spin_for_ns(uint64_t ns)
{
    park_time_t until = park_now() + ns;
    while (park_now() < until) {
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- the reader/writer oracle, shared by the mixed runs -------------------- */

#define INCREMENTS 10
#define YIELD_ONE_IN 32
#define LONG_HOLD_ONE_IN 5000

/* A failed try or a timed-out lock_until leaves no waiter behind, so
 * nothing in the contract bounds how often it fails; after these many
 * failures a thread falls back to the blocking call (as mutex_stress). */
#define TRY_RETRIES 1000
#define UNTIL_RETRIES 50

struct shared {
    park_rwlock_t rw;
    atomic_int readers;       /* readers inside: the writer's oracle */
    atomic_int most_readers;  /* the most seen inside at once */
    volatile unsigned writer; /* writers inside, plain: guarded by the write hold */
    uint64_t a, b;            /* written together under the write hold */
};

static void reader_enter(struct shared *s)
{
    int in = atomic_fetch_add(&s->readers, 1) + 1;
    int most = atomic_load(&s->most_readers);
    while (in > most && !atomic_compare_exchange_weak(&s->most_readers, &most, in)) {
    }
    if (s->writer != 0)
        test_fail(__FILE__, __LINE__, "a reader sees a writer inside");
    if (s->a != s->b)
        test_fail(__FILE__, __LINE__, "a reader sees a half-done write");
}

static void reader_leave(struct shared *s)
{
    if (s->writer != 0 || s->a != s->b)
        test_fail(__FILE__, __LINE__, "a writer came in while a reader was inside");
    atomic_fetch_sub(&s->readers, 1);
}

static void writer_enter(struct shared *s)
{
    if (atomic_load(&s->readers) != 0)
        test_fail(__FILE__, __LINE__, "a writer sees a reader inside");
    ASSERT_EQ(s->writer, 0);
    for (int i = 0; i < INCREMENTS; i++)
        s->writer++;
    s->a++;
}

static void writer_leave(struct shared *s)
{
    s->b++;
    ASSERT_EQ(s->writer, INCREMENTS);
    if (atomic_load(&s->readers) != 0)
        test_fail(__FILE__, __LINE__, "a reader came in while a writer was inside");
    for (int i = 0; i < INCREMENTS; i++)
        s->writer--;
}

enum kind { READ, READ_TRY, READ_UNTIL, WRITE, WRITE_TRY, WRITE_UNTIL, DOWNGRADE, KIND_COUNT };

struct counts {
    uint64_t ops, reads, writes, downgrades;
    uint64_t timeouts;  /* lock_until gave ETIMEDOUT */
    uint64_t busy;      /* a try gave false */
    uint64_t fallbacks; /* retries exhausted: took the blocking call */
    uint64_t long_holds;
};

static park_time_t short_deadline(uint64_t *rng)
{
    /* Now and then one already passed (a lock it may enter must still be
     * taken then). */
    return test_rng_below(rng, 8) == 0 ? park_now() - 1
                                       : park_deadline_in(US + test_rng_below(rng, 300 * US));
}

/* Takes a read (write) hold by the way `kind` says. */
static void take(struct shared *s, enum kind kind, uint64_t *rng, struct counts *c)
{
    park_rwlock_t *rw = &s->rw;
    bool read = kind <= READ_UNTIL;
    switch (kind) {
    case READ:
        park_rwlock_read_lock(rw);
        return;
    case WRITE:
    case DOWNGRADE:
        park_rwlock_write_lock(rw);
        return;
    case READ_TRY:
    case WRITE_TRY:
        for (int i = 0; i < TRY_RETRIES; i++) {
            if (read ? park_rwlock_try_read_lock(rw) : park_rwlock_try_write_lock(rw))
                return;
            c->busy++;
            sched_yield();
        }
        break;
    default:
        for (int i = 0; i < UNTIL_RETRIES; i++) {
            park_time_t deadline = short_deadline(rng);
            int rc = read ? park_rwlock_read_lock_until(rw, deadline)
                          : park_rwlock_write_lock_until(rw, deadline);
            if (rc == 0)
                return;
            ASSERT_EQ(rc, ETIMEDOUT);
            ASSERT_GE(park_now(), deadline); /* never early */
            c->timeouts++;
        }
        break;
    }
    c->fallbacks++;
    if (read)
        park_rwlock_read_lock(rw);
    else
        park_rwlock_write_lock(rw);
}

static void maybe_dawdle(uint64_t *rng, struct counts *c)
{
    if (test_rng_below(rng, YIELD_ONE_IN) == 0)
        sched_yield();
    if (test_rng_below(rng, LONG_HOLD_ONE_IN) == 0) {
        test_sleep_ns(MS + test_rng_below(rng, 2 * MS + 1)); /* the holder is preempted */
        c->long_holds++;
    }
}

/* One operation of kind `kind`, oracle included. */
static void one_op(struct shared *s, enum kind kind, uint64_t *rng, struct counts *c)
{
    take(s, kind, rng, c);
    if (kind <= READ_UNTIL) {
        reader_enter(s);
        maybe_dawdle(rng, c);
        reader_leave(s);
        park_rwlock_read_unlock(&s->rw);
        c->reads++;
    } else if (kind == DOWNGRADE) {
        writer_enter(s);
        uint64_t mine = s->a;
        writer_leave(s);
        park_rwlock_downgrade(&s->rw);
        reader_enter(s);
        /* Under the read hold that follows, no writer may have come in. */
        if (s->a != mine)
            test_fail(__FILE__, __LINE__, "a writer got in between a write and its downgrade");
        maybe_dawdle(rng, c);
        reader_leave(s);
        park_rwlock_read_unlock(&s->rw);
        c->downgrades++;
    } else {
        writer_enter(s);
        maybe_dawdle(rng, c);
        writer_leave(s);
        park_rwlock_write_unlock(&s->rw);
        c->writes++;
    }
    c->ops++;
}

static void add_counts(struct counts *sum, const struct counts *c)
{
    sum->ops += c->ops;
    sum->reads += c->reads;
    sum->writes += c->writes;
    sum->downgrades += c->downgrades;
    sum->timeouts += c->timeouts;
    sum->busy += c->busy;
    sum->fallbacks += c->fallbacks;
    sum->long_holds += c->long_holds;
}

/* ---- exclusion with every kind of call mixed ------------------------------ */

#define MIX_MAX_THREADS 32

struct mix {
    struct shared s;
    pthread_barrier_t start;
    uint64_t target;   /* operations to make, all threads together */
    unsigned read_pct; /* share of read operations */
    atomic_uint_fast64_t done;
    atomic_uint starved; /* threads that have not completed an operation */
};

struct mix_thread {
    struct mix *m;
    uint64_t rng;
    struct counts c;
};

static enum kind pick(struct mix_thread *t)
{
    if (test_rng_below(&t->rng, 100) < t->m->read_pct)
        return (enum kind)test_rng_below(&t->rng, 3); /* READ, READ_TRY, READ_UNTIL */
    return (enum kind)(WRITE + test_rng_below(&t->rng, 4));
}

/* The run ends at the target, but not before every thread has completed an
 * operation (as mutex_stress: a thread the lock starves keeps the others
 * going until the watchdog fails the test). */
static void *mix_thread_main(void *arg)
{
    struct mix_thread *t = arg;
    struct mix *m = t->m;
    pthread_barrier_wait(&m->start);
    while (atomic_load(&m->done) < m->target || atomic_load(&m->starved) != 0) {
        one_op(&m->s, pick(t), &t->rng, &t->c);
        atomic_fetch_add(&m->done, 1);
        if (t->c.ops == 1)
            atomic_fetch_sub(&m->starved, 1);
    }
    return NULL;
}

static void mix_run(unsigned nthreads, unsigned read_pct, uint64_t target)
{
    struct mix *m = calloc(1, sizeof *m);
    ASSERT_TRUE(m != NULL);
    park_rwlock_init(&m->s.rw);
    m->target = test_scaled(target);
    m->read_pct = read_pct;
    atomic_init(&m->starved, nthreads);
    ASSERT_EQ(pthread_barrier_init(&m->start, NULL, nthreads), 0);

    struct mix_thread t[MIX_MAX_THREADS];
    ASSERT_LE(nthreads, MIX_MAX_THREADS);
    memset(t, 0, sizeof t);
    for (unsigned i = 0; i < nthreads; i++) {
        t[i].m = m;
        t[i].rng = test_rng_seed(i + 100 * nthreads);
    }
    test_threads_join(test_threads_start(nthreads, mix_thread_main, t, sizeof t[0]));
    pthread_barrier_destroy(&m->start);

    struct counts sum = {0};
    uint64_t min = UINT64_MAX, max = 0;
    for (unsigned i = 0; i < nthreads; i++) {
        add_counts(&sum, &t[i].c);
        min = t[i].c.ops < min ? t[i].c.ops : min;
        max = t[i].c.ops > max ? t[i].c.ops : max;
    }
    printf("     %2u threads, %u%% reads: %" PRIu64 " ops (%" PRIu64 " reads, %" PRIu64
           " writes, %" PRIu64 " downgrades), per thread min %" PRIu64 " max %" PRIu64
           "%s; at most %d readers inside at once; %" PRIu64 " timeouts, %" PRIu64
           " failed tries, %" PRIu64 " fallbacks, %" PRIu64 " long holds\n",
           nthreads, read_pct, sum.ops, sum.reads, sum.writes, sum.downgrades, min, max,
           max / 2 > min ? " (max/2 > min: unfair)" : "", atomic_load(&m->s.most_readers),
           sum.timeouts, sum.busy, sum.fallbacks, sum.long_holds);
    ASSERT_EQ(atomic_load(&m->s.readers), 0);
    ASSERT_EQ(m->s.writer, 0);
    ASSERT_EQ(m->s.a, sum.writes + sum.downgrades);
    ASSERT_EQ(m->s.b, m->s.a);
    ASSERT_EQ(sum.ops, atomic_load(&m->done));
    ASSERT_GE(sum.ops, m->target);
    ASSERT_GT(min, 0);
    ASSERT_EQ(park_rwlock_destroy(&m->s.rw), 0);
    free(m);
}

/* Sizes: each run takes well under 2 s with TSan on 2 cores. */
TEST(rwlock_readers_and_writers_exclude_each_other_at_2_threads)
{
    mix_run(2, 80, 60000);
}

TEST(rwlock_readers_and_writers_exclude_each_other_at_4_threads)
{
    mix_run(4, 80, 60000);
}

TEST(rwlock_readers_and_writers_exclude_each_other_at_16_threads)
{
    mix_run(16, 80, 60000);
}

TEST(rwlock_write_heavy_mix_excludes_at_4_threads)
{
    mix_run(4, 30, 40000);
}

/* tests/TESTING.md: 32 threads of try-read/read/write (and the rest) for a while
 * never stall; the watchdog turns a stall into a failure. */
TEST(rwlock_32_threads_of_every_call_never_stall)
{
    mix_run(32, 70, 60000);
}

/* ---- readers overlap --------------------------------------------------------- */

/* Readers only: with no writer ever waiting, readers must share the lock.
 * Each reader stays inside until it sees another one inside with it, so a
 * lock that lets one reader in at a time stalls (and the watchdog reports
 * it). Once a thread has finished, the others stop waiting for partners. */
#define OVERLAP_THREADS 4
#define OVERLAP_HOLDS 500

struct overlap {
    park_rwlock_t rw;
    atomic_int inside;
    atomic_int finished;
    atomic_uint_fast64_t overlapped;
};

static void *overlap_main(void *arg)
{
    struct overlap *o = arg;
    for (int i = 0; i < OVERLAP_HOLDS; i++) {
        park_rwlock_read_lock(&o->rw);
        atomic_fetch_add(&o->inside, 1);
        while (atomic_load(&o->inside) == 1 && atomic_load(&o->finished) == 0)
            sched_yield();
        if (atomic_load(&o->inside) > 1)
            atomic_fetch_add(&o->overlapped, 1);
        atomic_fetch_sub(&o->inside, 1);
        park_rwlock_read_unlock(&o->rw);
    }
    atomic_fetch_add(&o->finished, 1);
    return NULL;
}

TEST(rwlock_readers_share_the_lock_when_no_writer_waits)
{
    struct overlap o = {PARK_RWLOCK_INIT, 0, 0, 0};
    test_threads_join(test_threads_start(OVERLAP_THREADS, overlap_main, &o, 0));
    uint64_t overlapped = atomic_load(&o.overlapped);
    printf("     %" PRIu64 " of %d read holds had another reader inside\n", overlapped,
           OVERLAP_THREADS * OVERLAP_HOLDS);
    /* Every hold of the first thread to finish had a partner. */
    ASSERT_GE(overlapped, OVERLAP_HOLDS);
    ASSERT_EQ(park_rwlock_destroy(&o.rw), 0);
}

/* ---- bounded waits -------------------------------------------------------- */

#define STREAM_WAITS 200
#define STREAM_HOLD_NS (50u * US)
#define STREAM_CAP_MS 10000u       /* scaled; the stream gives up after this */
#define STREAM_CAP_LIMIT_MS 45000u /* stays below the 60 s watchdog */
#define WORST_LIMIT_NS (1000u * MS)

struct stream {
    park_rwlock_t rw;
    bool writers; /* the stream is of writers (else of readers) */
    atomic_bool stop;
    atomic_bool capped; /* the stream gave up at `cap` */
    atomic_int holding; /* stream threads inside now */
    park_time_t cap;
    atomic_uint_fast64_t rounds;
};

static void *stream_main(void *arg)
{
    struct stream *s = arg;
    uint64_t mine = 0;
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        if (s->writers)
            park_rwlock_write_lock(&s->rw);
        else
            park_rwlock_read_lock(&s->rw);
        atomic_fetch_add(&s->holding, 1);
        spin_for_ns(STREAM_HOLD_NS);
        atomic_fetch_sub(&s->holding, 1);
        if (s->writers)
            park_rwlock_write_unlock(&s->rw);
        else
            park_rwlock_read_unlock(&s->rw);
        atomic_fetch_add(&s->rounds, 1);
        if (++mine % 64 == 0 && park_now() >= s->cap) {
            atomic_store(&s->capped, true);
            break;
        }
    }
    return NULL;
}

/* `streamers` threads keep the lock busy (writers: one after the other;
 * readers: overlapping, so the lock is never free) while this thread takes
 * the other kind of hold STREAM_WAITS times, each started while a streamer
 * holds the lock. Without the policy's bounds this thread would starve. */
static void stream_run(bool writers, unsigned streamers)
{
    struct stream s;
    memset(&s, 0, sizeof s);
    park_rwlock_init(&s.rw);
    s.writers = writers;
    uint64_t cap_ms = test_scaled(STREAM_CAP_MS);
    s.cap = park_deadline_in((cap_ms < STREAM_CAP_LIMIT_MS ? cap_ms : STREAM_CAP_LIMIT_MS) * MS);
    size_t k = (size_t)test_scaled(STREAM_WAITS);
    uint64_t *waits = calloc(k, sizeof *waits);
    ASSERT_TRUE(waits != NULL);

    test_threads_t *t = test_threads_start(streamers, stream_main, &s, 0);
    for (size_t i = 0; i < k; i++) {
        while (atomic_load(&s.holding) == 0 && !atomic_load(&s.capped))
            sched_yield();
        park_time_t t0 = park_now();
        if (writers) {
            park_rwlock_read_lock(&s.rw);
            waits[i] = park_now() - t0;
            ASSERT_EQ(atomic_load(&s.holding), 0);
            park_rwlock_read_unlock(&s.rw);
        } else {
            park_rwlock_write_lock(&s.rw);
            waits[i] = park_now() - t0;
            ASSERT_EQ(atomic_load(&s.holding), 0);
            park_rwlock_write_unlock(&s.rw);
        }
    }
    atomic_store(&s.stop, true);
    test_threads_join(t);

    qsort(waits, k, sizeof *waits, cmp_u64);
    printf("     %zu %s against %u %s (%" PRIu64 " rounds): median %" PRIu64 " us, worst %" PRIu64
           " us\n",
           k, writers ? "reads" : "writes", streamers, writers ? "writers" : "readers",
           (uint64_t)atomic_load(&s.rounds), waits[k / 2] / US, waits[k - 1] / US);
    ASSERT_FALSE(atomic_load(&s.capped));
    ASSERT_LT(waits[k - 1], WORST_LIMIT_NS);
    free(waits);
    ASSERT_EQ(park_rwlock_destroy(&s.rw), 0);
}

TEST(rwlock_stream_of_writers_does_not_starve_a_reader)
{
    stream_run(true, 3);
}

TEST(rwlock_overlapping_readers_do_not_starve_a_writer)
{
    stream_run(false, 4);
}

/* ---- timed-out writers strand nobody ------------------------------------- */

/* Readers come and go, and timed writers with deadlines around a reader's
 * hold time queue among them and mostly give up, each one releasing the
 * readers queued behind it. A reader left behind stalls its thread, which
 * the watchdog reports. */
struct timeouts {
    park_rwlock_t rw;
    uint64_t rounds;
    atomic_uint_fast64_t granted, timed_out;
    atomic_int readers_left;
};

struct timeouts_thread {
    struct timeouts *t;
    bool writer;
    uint64_t rng;
};

static void *timeouts_main(void *arg)
{
    struct timeouts_thread *me = arg;
    struct timeouts *t = me->t;
    if (me->writer) {
        while (atomic_load(&t->readers_left) > 0) {
            park_time_t deadline = park_deadline_in(test_rng_below(&me->rng, 200 * US));
            if (park_rwlock_write_lock_until(&t->rw, deadline) == 0) {
                atomic_fetch_add(&t->granted, 1);
                park_rwlock_write_unlock(&t->rw);
            } else {
                atomic_fetch_add(&t->timed_out, 1);
            }
        }
        return NULL;
    }
    for (uint64_t i = 0; i < t->rounds; i++) {
        park_rwlock_read_lock(&t->rw);
        spin_for_ns(test_rng_below(&me->rng, 100 * US));
        park_rwlock_read_unlock(&t->rw);
    }
    atomic_fetch_sub(&t->readers_left, 1);
    return NULL;
}

TEST(rwlock_timed_out_writers_strand_no_reader)
{
    enum { READERS = 4, WRITERS = 3 };
    struct timeouts t = {PARK_RWLOCK_INIT, test_scaled(2000), 0, 0, READERS};
    struct timeouts_thread th[READERS + WRITERS];
    for (unsigned i = 0; i < READERS + WRITERS; i++)
        th[i] = (struct timeouts_thread){&t, i >= READERS, test_rng_seed(i)};
    test_threads_join(test_threads_start(READERS + WRITERS, timeouts_main, th, sizeof th[0]));
    printf("     %" PRIu64 " reads; timed writers: %" PRIu64 " granted, %" PRIu64 " timed out\n",
           READERS * t.rounds, (uint64_t)atomic_load(&t.granted),
           (uint64_t)atomic_load(&t.timed_out));
    ASSERT_GT(atomic_load(&t.timed_out), 0);
    ASSERT_EQ(park_rwlock_destroy(&t.rw), 0);
}

/* ---- release-then-free ------------------------------------------------------ */

/* The lock alone on a page that the next holder unmaps at once: a touch by
 * the previous holder's release after its hand-over faults (SIGSEGV in
 * every build). A holds the lock (read or write) and B takes it (read or
 * write, not both read: a reader would not wait for a reader), mostly
 * while queued, so that A's release is the slow one that hands it over. */
static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

struct free_race {
    bool a_writes, b_writes;
    uint64_t iterations;
    _Atomic(park_rwlock_t *) handoff;
};

static void *free_race_next_holder(void *arg)
{
    struct free_race *r = arg;
    for (uint64_t i = 0; i < r->iterations; i++) {
        park_rwlock_t *rw;
        while ((rw = atomic_exchange(&r->handoff, NULL)) == NULL)
            sched_yield();
        if (r->b_writes) {
            park_rwlock_write_lock(rw);
            park_rwlock_write_unlock(rw);
        } else {
            park_rwlock_read_lock(rw);
            park_rwlock_read_unlock(rw);
        }
        ASSERT_EQ(park_rwlock_destroy(rw), 0);
        ASSERT_EQ(munmap(rw, page_size()), 0);
    }
    return NULL;
}

static void free_race_run(bool a_writes, bool b_writes, uint64_t iterations)
{
    struct free_race r = {a_writes, b_writes, test_scaled(iterations), NULL};
    uint64_t queued = 0;
    test_threads_t *b = test_threads_start(1, free_race_next_holder, &r, sizeof r);
    for (uint64_t i = 0; i < r.iterations; i++) {
        park_rwlock_t *rw =
            mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_TRUE(rw != MAP_FAILED);
        park_rwlock_init(rw);
        if (a_writes)
            park_rwlock_write_lock(rw);
        else
            park_rwlock_read_lock(rw);
        while (atomic_load(&r.handoff) != NULL)
            sched_yield();
        bool wait = i % 4 != 0;
        atomic_store(&r.handoff, rw);
        if (wait) {
            while (!park__wait_has_waiters(rw))
                sched_yield();
            queued++;
        }
        if (a_writes)
            park_rwlock_write_unlock(rw); /* B may unmap rw before this returns */
        else
            park_rwlock_read_unlock(rw);
    }
    test_threads_join(b);
    printf("     %" PRIu64 " hand-overs, %" PRIu64 " to a queued next holder\n", r.iterations,
           queued);
}

TEST(rwlock_next_writer_may_unmap_the_lock_after_a_write_unlock)
{
    free_race_run(true, true, 2000);
}

TEST(rwlock_next_writer_may_unmap_the_lock_after_a_read_unlock)
{
    free_race_run(false, true, 2000);
}

TEST(rwlock_next_reader_may_unmap_the_lock_after_a_write_unlock)
{
    free_race_run(true, false, 2000);
}

/* ---- read-mostly: readers against a periodic writer ------------------------ */

/* Readers that hold the lock through the table, from the word, and release
 * holds across a re-bias, against a writer that revokes the bias every
 * 60 us (the lock is biased again between writes): every release finds a
 * hold (none is taken for the bias hold, which would abort as misuse), the
 * writer excludes the readers, and the lock ends free. */
struct periodic {
    park_rwlock_t rw;
    atomic_uint readers;
    atomic_bool stop;
    uint64_t value; /* written under the write hold, read under read holds */
    unsigned rounds;
};

static void *periodic_reader(void *arg)
{
    struct periodic *p = arg;
    uint64_t seen = 0;
    for (unsigned i = 0; i < p->rounds && !atomic_load(&p->stop); i++) {
        park_rwlock_read_lock(&p->rw);
        atomic_fetch_add(&p->readers, 1);
        ASSERT_GE(p->value, seen);
        seen = p->value;
        atomic_fetch_sub(&p->readers, 1);
        park_rwlock_read_unlock(&p->rw);
    }
    return NULL;
}

TEST(rwlock_read_mostly_readers_against_a_periodic_writer)
{
    struct periodic *p = calloc(1, sizeof *p);
    ASSERT_TRUE(p != NULL);
    park_rwlock_init_read_mostly(&p->rw);
    p->rounds = (unsigned)test_scaled(400000);
    test_threads_t *t = test_threads_start(4, periodic_reader, p, 0);
    park_time_t until = park_now() + test_scaled(300) * MS;
    unsigned writes = 0;
    while (park_now() < until) {
        park_rwlock_write_lock(&p->rw);
        ASSERT_EQ(atomic_load(&p->readers), 0);
        p->value++;
        park_rwlock_write_unlock(&p->rw);
        writes++;
        spin_for_ns(60 * US);
    }
    atomic_store(&p->stop, true);
    test_threads_join(t);
    printf("     %u writes against 4 readers\n", writes);
    ASSERT_EQ(park_rwlock_destroy(&p->rw), 0);
    free(p);
}

static const test_case_t tests[] = {
    TEST_ENTRY(rwlock_readers_and_writers_exclude_each_other_at_2_threads),
    TEST_ENTRY(rwlock_readers_and_writers_exclude_each_other_at_4_threads),
    TEST_ENTRY(rwlock_readers_and_writers_exclude_each_other_at_16_threads),
    TEST_ENTRY(rwlock_write_heavy_mix_excludes_at_4_threads),
    TEST_ENTRY(rwlock_32_threads_of_every_call_never_stall),
    TEST_ENTRY(rwlock_readers_share_the_lock_when_no_writer_waits),
    TEST_ENTRY(rwlock_stream_of_writers_does_not_starve_a_reader),
    TEST_ENTRY(rwlock_overlapping_readers_do_not_starve_a_writer),
    TEST_ENTRY(rwlock_timed_out_writers_strand_no_reader),
    TEST_ENTRY(rwlock_next_writer_may_unmap_the_lock_after_a_write_unlock),
    TEST_ENTRY(rwlock_next_writer_may_unmap_the_lock_after_a_read_unlock),
    TEST_ENTRY(rwlock_next_reader_may_unmap_the_lock_after_a_write_unlock),
    TEST_ENTRY(rwlock_read_mostly_readers_against_a_periodic_writer),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
