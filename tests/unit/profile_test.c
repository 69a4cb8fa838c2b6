/* Contention profiling (park/profile.h): which call site waited, how long.
 *
 * Linked against the shared libpark, so that the profiler knows park's code
 * exactly, and with its own symbols exported, so that dladdr names the
 * sites. Every contended wait here is made certain (the holder keeps the
 * lock until the waiter is seen queued, then a while longer), so the
 * expected records do not depend on timing. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <park/mutex.h>
#include <park/pool.h>
#include <park/profile.h>
#include <park/rwlock.h>
#include <park/sem.h>
#include <park/task.h>

#include "test.h"

/* The sites: a lock call that is not a tail call, so that the return
 * address lies inside the site's function. */
__attribute__((noinline, visibility("default"))) void contended_site_a(park_mutex_t *m)
{
    park_mutex_lock(m);
    __asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline, visibility("default"))) void contended_site_b(park_mutex_t *m)
{
    park_mutex_lock(m);
    __asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline, visibility("default"))) void uncontended_site(park_mutex_t *m)
{
    park_mutex_lock(m);
    __asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline, visibility("default"))) void contended_write_site(park_rwlock_t *rw)
{
    park_rwlock_write_lock(rw);
    __asm__ __volatile__("" ::: "memory");
}

struct contend {
    park_mutex_t *m;
    void (*site)(park_mutex_t *m);
    unsigned rounds;
    atomic_uint held;  /* rounds the main thread has begun holding m */
    atomic_uint taken; /* rounds the waiter has taken m in */
};

static void *waiter_main(void *arg)
{
    struct contend *c = arg;
    for (unsigned r = 1; r <= c->rounds; r++) {
        AWAIT(atomic_load(&c->held) == r);
        c->site(c->m);
        park_mutex_unlock(c->m);
        atomic_store(&c->taken, r);
    }
    return NULL;
}

static bool queued_on(park_mutex_t *m)
{
    return (__atomic_load_n(&m->state_, __ATOMIC_RELAXED) & PARK__MUTEX_PARKED) != 0;
}

/* rounds times: the main thread holds m until a waiter calling site(m) is
 * queued on it, and hold_ns longer; so each round is one contended wait of
 * at least hold_ns at site. */
static void contend_rounds(void (*site)(park_mutex_t *m), unsigned rounds, uint64_t hold_ns)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    struct contend c = {.m = &m, .site = site, .rounds = rounds};
    test_threads_t *t = test_threads_start(1, waiter_main, &c, sizeof c);
    for (unsigned r = 1; r <= rounds; r++) {
        park_mutex_lock(&m);
        atomic_store(&c.held, r);
        AWAIT(queued_on(&m));
        test_sleep_ns(hold_ns);
        park_mutex_unlock(&m);
        AWAIT(atomic_load(&c.taken) == r);
    }
    test_threads_join(t);
}

static void uncontended_rounds(unsigned n)
{
    park_mutex_t m = PARK_MUTEX_INIT;
    for (unsigned i = 0; i < n; i++) {
        uncontended_site(&m);
        park_mutex_unlock(&m);
    }
}

static const char *site_name(const park_profile_site_t *s)
{
    Dl_info info;
    if (!dladdr((const char *)s->stack[0] - 1, &info) || !info.dli_sname)
        return "?";
    return info.dli_sname;
}

#define MAX_SITES 16

TEST(profile_off_records_nothing)
{
    park_profile_stop();
    park_profile_reset();
    ASSERT_FALSE(park_profile_enabled());
    contend_rounds(contended_site_a, 2, 2 * MS);
    ASSERT_EQ(park_profile_sites(NULL, 0), 0);
    ASSERT_EQ(park_profile_dropped(), 0);
}

TEST(profile_ranks_the_contended_sites_by_total_wait_and_never_lists_an_uncontended_one)
{
    enum { A_ROUNDS = 5, B_ROUNDS = 3 };
    const uint64_t a_hold = 30 * MS, b_hold = 3 * MS;
    park_profile_reset();
    ASSERT_EQ(park_profile_start(), 0);
    uint64_t began = test_now_ns();
    uncontended_rounds(1000);
    contend_rounds(contended_site_b, B_ROUNDS, b_hold);
    contend_rounds(contended_site_a, A_ROUNDS, a_hold);
    uncontended_rounds(1000);
    uint64_t elapsed = test_now_ns() - began;
    park_profile_stop();

    park_profile_site_t sites[MAX_SITES];
    size_t n = park_profile_sites(sites, MAX_SITES);
    ASSERT_GE(n, 2);
    for (size_t i = 0; i < n && i < MAX_SITES; i++)
        ASSERT_TRUE(strcmp(site_name(&sites[i]), "uncontended_site") != 0);
    if (getenv("PROFILE_TEST_DUMP"))
        park_profile_dump(stderr);
    ASSERT_TRUE(strcmp(site_name(&sites[0]), "contended_site_a") == 0);
    ASSERT_TRUE(strcmp(site_name(&sites[1]), "contended_site_b") == 0);
    /* Each round was one wait of at least the hold, within the test's time;
     * a waiter woken to retry that lost and queued again is the same wait. */
    ASSERT_EQ(sites[0].waits, A_ROUNDS);
    ASSERT_EQ(sites[1].waits, B_ROUNDS);
    ASSERT_GE(sites[0].max_ns, a_hold);
    ASSERT_GE(sites[0].total_ns, A_ROUNDS * a_hold);
    ASSERT_GE(sites[1].total_ns, B_ROUNDS * b_hold);
    ASSERT_LE(sites[0].total_ns + sites[1].total_ns, elapsed);
    ASSERT_LE(sites[0].max_ns, sites[0].total_ns);
    ASSERT_LE(sites[0].handoffs, sites[0].waits);
    ASSERT_EQ(sites[0].kind, PARK_PROFILE_MUTEX);
    ASSERT_TRUE(sites[0].lock != NULL);
    ASSERT_GE(sites[0].depth, 2); /* the site and its caller, by frame pointers */
    ASSERT_EQ(park_profile_dropped(), 0);
}

/* The roles of contend_rounds swapped: the calling thread waits at
 * contended_site_a, n times, while a thread of its own holds the lock
 * holds[i] longer than it takes to see the caller queued. */
struct holder {
    park_mutex_t m;
    const uint64_t *holds;
    unsigned n;
    atomic_uint held, taken;
};

static void *holder_main(void *arg)
{
    struct holder *h = arg;
    for (unsigned r = 1; r <= h->n; r++) {
        park_mutex_lock(&h->m);
        atomic_store(&h->held, r);
        AWAIT(queued_on(&h->m));
        test_sleep_ns(h->holds[r - 1]);
        park_mutex_unlock(&h->m);
        AWAIT(atomic_load(&h->taken) == r);
    }
    return NULL;
}

static void caller_waits(const uint64_t *holds, unsigned n)
{
    struct holder h = {.m = PARK_MUTEX_INIT, .holds = holds, .n = n};
    test_threads_t *t = test_threads_start(1, holder_main, &h, sizeof h);
    for (unsigned r = 1; r <= n; r++) {
        AWAIT(atomic_load(&h.held) == r);
        contended_site_a(&h.m);
        park_mutex_unlock(&h.m);
        atomic_store(&h.taken, r);
    }
    test_threads_join(t);
}

/* Nine short waits and one long one at a site: the median is a short
 * wait's length or more, the 99th and 99.9th percentiles are the long
 * one's, within the histogram's resolution (a bucket's middle is within
 * 1/32 of any value in it), and none is beyond the maximum. Then a reset,
 * and the same thread waits once more at the same site (the same slot of
 * its table): the histogram starts empty again. */
TEST(profile_percentiles_of_a_site_come_from_every_wait)
{
    const uint64_t s_ns = 2 * MS, l_ns = 60 * MS;
    const uint64_t before[] = {s_ns, s_ns, s_ns, s_ns, l_ns, s_ns, s_ns, s_ns, s_ns, s_ns};
    const uint64_t after[] = {l_ns};
    park_profile_site_t sites[MAX_SITES];
    for (int phase = 0; phase < 2; phase++) {
        park_profile_reset();
        ASSERT_EQ(park_profile_start(), 0);
        caller_waits(phase ? after : before, phase ? 1 : 10); /* one call site */
        park_profile_stop();
        ASSERT_EQ(park_profile_sites(sites, MAX_SITES), 1);
        const park_profile_site_t *s = &sites[0];
        ASSERT_EQ(s->waits, phase == 0 ? 10 : 1);
        ASSERT_GE(s->p99_ns, l_ns - l_ns / 32);
        ASSERT_GE(s->p999_ns, s->p99_ns);
        ASSERT_LE(s->p999_ns, s->max_ns);
        ASSERT_GE(s->max_ns, l_ns);
        if (phase == 0) {
            ASSERT_GE(s->p50_ns, s_ns - s_ns / 32);
            ASSERT_LE(s->p50_ns, s->p99_ns);
        } else {
            /* One wait, a long one: it is the median (the nine short
             * waits of before would make the median short). */
            ASSERT_GE(s->p50_ns, l_ns - l_ns / 32);
        }
    }
}

TEST(profile_reset_forgets_every_record)
{
    ASSERT_EQ(park_profile_start(), 0);
    contend_rounds(contended_site_a, 1, 1 * MS);
    park_profile_stop();
    ASSERT_GE(park_profile_sites(NULL, 0), 1);
    park_profile_reset();
    ASSERT_EQ(park_profile_sites(NULL, 0), 0);
}

static void nothing(void *arg)
{
    (void)arg;
}

/* Pool workers that sleep for lack of work, and the timer thread that
 * sleeps until a delay is due, wait in lib/wait too; that is idling, not
 * contention, and must not show in the table. */
TEST(profile_does_not_record_a_pool_idling_or_its_timer_sleeping)
{
    park_profile_reset();
    ASSERT_EQ(park_profile_start(), 0);
    park_pool_t *pool;
    ASSERT_EQ(park_pool_create(&pool, &(park_pool_config_t){.threads = 2}), 0);
    park_pool_stats_t st;
    do { /* until a worker has gone to sleep and been woken again */
        usleep(2000);
        ASSERT_EQ(park_pool_submit(pool, nothing, NULL), 0);
        park_task_t *t = park_task_delay(pool, 1 * MS);
        ASSERT_TRUE(t != NULL);
        while (!park_task_done(t)) /* not park_task_wait: that would record */
            usleep(200);
        park_task_release(t);
        park_pool_stats(pool, &st);
    } while (st.parks < 2);
    park_pool_destroy(pool);
    park_profile_stop();
    ASSERT_EQ(park_profile_sites(NULL, 0), 0);
    ASSERT_EQ(park_profile_dropped(), 0);
}

struct rw_contend {
    park_rwlock_t rw;
    atomic_bool held, taken;
};

static void *writer_main(void *arg)
{
    struct rw_contend *c = arg;
    AWAIT(atomic_load(&c->held));
    contended_write_site(&c->rw);
    park_rwlock_write_unlock(&c->rw);
    atomic_store(&c->taken, true);
    return NULL;
}

TEST(profile_records_a_writer_wait_as_rwlock_write)
{
    struct rw_contend c = {.rw = PARK_RWLOCK_INIT};
    park_profile_reset();
    ASSERT_EQ(park_profile_start(), 0);
    park_rwlock_read_lock(&c.rw);
    test_threads_t *t = test_threads_start(1, writer_main, &c, sizeof c);
    atomic_store(&c.held, true);
    test_sleep_ns(20 * MS); /* choreography: the writer spins, then queues */
    park_rwlock_read_unlock(&c.rw);
    AWAIT(atomic_load(&c.taken));
    test_threads_join(t);
    park_profile_stop();
    park_profile_site_t sites[MAX_SITES];
    size_t n = park_profile_sites(sites, MAX_SITES);
    /* Whether the writer queued before the reader left is the scheduler's
     * choice; if it waited, it is named and kinded. */
    for (size_t i = 0; i < n && i < MAX_SITES; i++) {
        ASSERT_TRUE(strcmp(site_name(&sites[i]), "contended_write_site") == 0);
        ASSERT_EQ(sites[i].kind, PARK_PROFILE_RWLOCK_WRITE);
    }
}

static bool file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    ASSERT_TRUE(f != NULL);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

TEST(profile_dump_and_folded_stacks_name_the_contended_sites)
{
    park_profile_reset();
    ASSERT_EQ(park_profile_start(), 0);
    contend_rounds(contended_site_a, 2, 2 * MS);
    uncontended_rounds(100);
    park_profile_stop();

    char table[] = "/tmp/park_profile_XXXXXX", folded[] = "/tmp/park_folded_XXXXXX";
    int fd1 = mkstemp(table), fd2 = mkstemp(folded);
    ASSERT_TRUE(fd1 >= 0 && fd2 >= 0);
    FILE *f1 = fdopen(fd1, "w"), *f2 = fdopen(fd2, "w");
    ASSERT_EQ(park_profile_dump(f1), 0);
    ASSERT_EQ(park_profile_dump_folded(f2), 0);
    fclose(f1);
    fclose(f2);
    ASSERT_TRUE(file_has(table, "2 contended waits"));
    ASSERT_TRUE(file_has(table, "contended_site_a+0x"));
    ASSERT_TRUE(file_has(table, "mutex"));
    ASSERT_FALSE(file_has(table, "uncontended_site"));
    ASSERT_TRUE(file_has(folded, ";contended_site_a;park:mutex "));
    ASSERT_FALSE(file_has(folded, "uncontended_site"));
    unlink(table);
    unlink(folded);
}

TEST(profile_kind_names)
{
    ASSERT_TRUE(strcmp(park_profile_kind_name(PARK_PROFILE_MUTEX), "mutex") == 0);
    ASSERT_TRUE(strcmp(park_profile_kind_name(PARK_PROFILE_RWLOCK_WRITE), "rwlock.write") == 0);
    ASSERT_TRUE(strcmp(park_profile_kind_name(PARK_PROFILE_KINDS), "?") == 0);
}

/* A timed acquisition of a taken lock whose deadline has passed gives up
 * after its spin, never queueing: it found the lock taken, so it is a
 * contended acquisition and is recorded (the spin's time, a timeout, not
 * a hand-off), for the mutex, the semaphore and the rwlock alike. */
struct timed_out {
    park_mutex_t m;
    park_sem_t s;
    park_rwlock_t rw;
    int errs[3];
};

static void *timed_out_main(void *arg)
{
    struct timed_out *t = arg;
    t->errs[0] = park_mutex_lock_until(&t->m, park_now());
    t->errs[1] = park_sem_acquire_until(&t->s, park_now());
    t->errs[2] = park_rwlock_write_lock_until(&t->rw, park_now());
    return NULL;
}

TEST(profile_records_a_contended_acquisition_that_never_queued)
{
    struct timed_out t = {.m = PARK_MUTEX_INIT, .s = PARK_SEM_INIT(0, 1), .rw = PARK_RWLOCK_INIT};
    park_mutex_lock(&t.m);
    park_rwlock_read_lock(&t.rw);
    park_profile_reset();
    ASSERT_EQ(park_profile_start(), 0);
    test_threads_t *th = test_threads_start(1, timed_out_main, &t, sizeof t);
    test_threads_join(th);
    park_profile_stop();
    park_rwlock_read_unlock(&t.rw);
    park_mutex_unlock(&t.m);
    park_profile_site_t sites[MAX_SITES];
    size_t n = park_profile_sites(sites, MAX_SITES);
    ASSERT_EQ(n, 3);
    bool seen[PARK_PROFILE_KINDS] = {false};
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(sites[i].waits, 1);
        ASSERT_EQ(sites[i].handoffs, 0);
        ASSERT_GE(sites[i].max_ns, 1);
        seen[sites[i].kind] = true;
    }
    ASSERT_TRUE(seen[PARK_PROFILE_MUTEX]);
    ASSERT_TRUE(seen[PARK_PROFILE_SEM]);
    ASSERT_TRUE(seen[PARK_PROFILE_RWLOCK_WRITE]);
    ASSERT_EQ(park_profile_dropped(), 0);
    park_profile_reset();
}

static const test_case_t tests[] = {
    TEST_ENTRY(profile_off_records_nothing),
    TEST_ENTRY(profile_ranks_the_contended_sites_by_total_wait_and_never_lists_an_uncontended_one),
    TEST_ENTRY(profile_percentiles_of_a_site_come_from_every_wait),
    TEST_ENTRY(profile_records_a_contended_acquisition_that_never_queued),
    TEST_ENTRY(profile_reset_forgets_every_record),
    TEST_ENTRY(profile_records_a_writer_wait_as_rwlock_write),
    TEST_ENTRY(profile_dump_and_folded_stacks_name_the_contended_sites),
    TEST_ENTRY(profile_kind_names),
    TEST_ENTRY(profile_does_not_record_a_pool_idling_or_its_timer_sleeping),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
