/* tests/unit/deque_test.c: the work-stealing deque (lib/pool/deque.h),
 * white-box, one behaviour per test.
 *
 * The sequential tests pin the order: the owner pops the newest item
 * (LIFO), thieves take the oldest (FIFO), a full deque refuses a push and
 * keeps what it holds. The concurrent tests run the owner against 1, 2 and
 * 3 thieves over 10^6 items (scaled by PARK_STRESS_SCALE) with these
 * oracles: every item is taken exactly once, with the function it was
 * pushed with; each thief's successive steals are ever newer items (top
 * only moves forward); a pop right after pushes returns the newest item and
 * successive pops return ever older ones.
 *
 * deque.c has two pop/steal pairs, chosen once by park__deque_setup: the
 * paper's, with a fence on every pop, and an asymmetric one, where pop has
 * no fence and a thief issues membarrier(2). The concurrent tests run each
 * (the asymmetric one where the kernel offers membarrier and the build is
 * not under ThreadSanitizer, which selects the paper's). */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pool/deque.h"

#include "test.h"

/* Items are numbered from 0; item i is {fn_of(i), arg_of(i)}. Two distinct
 * functions catch a slot whose fn and arg come from different pushes. */
static void job_even(void *arg)
{
    (void)arg;
}

static void job_odd(void *arg)
{
    (void)arg;
}

static void (*fn_of(uint64_t i))(void *)
{
    return i & 1 ? job_odd : job_even;
}

static void *arg_of(uint64_t i)
{
    return (void *)(uintptr_t)(i + 1);
}

/* The item a job stands for, after checking that its fn matches its arg. */
static uint64_t item_of(park__job_t job)
{
    uintptr_t a = (uintptr_t)job.arg;
    if (a == 0)
        test_fail(__FILE__, __LINE__, "a taken job has a NULL argument");
    uint64_t i = (uint64_t)a - 1;
    if (job.fn != fn_of(i))
        test_fail(__FILE__, __LINE__, "item %" PRIu64 " taken with the wrong function", i);
    return i;
}

static park__deque_t *deque_new(void)
{
    park__deque_t *d = aligned_alloc(_Alignof(park__deque_t), sizeof(park__deque_t));
    ASSERT_TRUE(d != NULL);
    memset(d, 0xa5, sizeof *d); /* init must not rely on zeroed memory */
    park__deque_init(d);
    return d;
}

static void push_item(park__deque_t *d, uint64_t i)
{
    ASSERT_TRUE(park__deque_push(d, fn_of(i), arg_of(i)));
}

static uint64_t pop_item(park__deque_t *d)
{
    park__job_t job;
    ASSERT_TRUE(park__deque_pop(d, &job));
    return item_of(job);
}

static uint64_t steal_item(park__deque_t *d)
{
    park__job_t job;
    ASSERT_EQ(park__deque_steal(d, &job), PARK__STEAL_OK);
    return item_of(job);
}

static void assert_empty(park__deque_t *d)
{
    park__job_t job;
    ASSERT_TRUE(park__deque_looks_empty(d));
    ASSERT_FALSE(park__deque_pop(d, &job));
    ASSERT_EQ(park__deque_steal(d, &job), PARK__STEAL_EMPTY);
    ASSERT_TRUE(park__deque_looks_empty(d));
}

/* ---- one thread --------------------------------------------------------------- */

TEST(deque_new_is_empty)
{
    park__deque_t *d = deque_new();
    assert_empty(d);
    free(d);
}

TEST(deque_pop_on_empty_returns_false_and_leaves_it_usable)
{
    park__deque_t *d = deque_new();
    park__job_t job;
    for (int k = 0; k < 3; k++)
        ASSERT_FALSE(park__deque_pop(d, &job));
    push_item(d, 7);
    ASSERT_EQ(pop_item(d), 7);
    ASSERT_FALSE(park__deque_pop(d, &job));
    push_item(d, 8);
    ASSERT_EQ(steal_item(d), 8);
    assert_empty(d);
    free(d);
}

TEST(deque_steal_on_empty_returns_empty_and_leaves_it_usable)
{
    park__deque_t *d = deque_new();
    park__job_t job;
    for (int k = 0; k < 3; k++)
        ASSERT_EQ(park__deque_steal(d, &job), PARK__STEAL_EMPTY);
    push_item(d, 3);
    ASSERT_EQ(steal_item(d), 3);
    ASSERT_EQ(park__deque_steal(d, &job), PARK__STEAL_EMPTY);
    push_item(d, 4);
    ASSERT_EQ(pop_item(d), 4);
    assert_empty(d);
    free(d);
}

TEST(deque_looks_empty_is_false_while_it_holds_an_item)
{
    park__deque_t *d = deque_new();
    push_item(d, 0);
    ASSERT_FALSE(park__deque_looks_empty(d));
    push_item(d, 1);
    ASSERT_EQ(pop_item(d), 1);
    ASSERT_FALSE(park__deque_looks_empty(d));
    ASSERT_EQ(steal_item(d), 0);
    assert_empty(d);
    free(d);
}

TEST(deque_owner_pops_newest_first)
{
    park__deque_t *d = deque_new();
    for (uint64_t i = 0; i < 100; i++)
        push_item(d, i);
    for (uint64_t i = 100; i-- > 0;)
        ASSERT_EQ(pop_item(d), i);
    assert_empty(d);
    free(d);
}

TEST(deque_thief_steals_oldest_first)
{
    park__deque_t *d = deque_new();
    for (uint64_t i = 0; i < 100; i++)
        push_item(d, i);
    for (uint64_t i = 0; i < 100; i++)
        ASSERT_EQ(steal_item(d), i);
    assert_empty(d);
    free(d);
}

/* Pops and steals meet in the middle: each end keeps its order. */
TEST(deque_pop_and_steal_take_from_opposite_ends)
{
    park__deque_t *d = deque_new();
    for (uint64_t i = 0; i < 10; i++)
        push_item(d, i);
    for (uint64_t k = 0; k < 5; k++) {
        ASSERT_EQ(steal_item(d), k);
        ASSERT_EQ(pop_item(d), 9 - k);
    }
    assert_empty(d);
    free(d);
}

TEST(deque_push_on_full_returns_false_and_keeps_every_item)
{
    park__deque_t *d = deque_new();
    for (uint64_t i = 0; i < PARK__DEQUE_CAP; i++)
        push_item(d, i);
    ASSERT_FALSE(park__deque_push(d, fn_of(PARK__DEQUE_CAP), arg_of(PARK__DEQUE_CAP)));
    ASSERT_FALSE(park__deque_push(d, fn_of(PARK__DEQUE_CAP), arg_of(PARK__DEQUE_CAP)));
    /* The refused pushes overwrote nothing: the oldest and the newest are
     * still there, and so is everything between. */
    ASSERT_EQ(steal_item(d), 0);
    for (uint64_t i = PARK__DEQUE_CAP; i-- > 1;)
        ASSERT_EQ(pop_item(d), i);
    assert_empty(d);
    free(d);
}

TEST(deque_push_succeeds_again_once_an_item_is_taken_from_a_full_deque)
{
    park__deque_t *d = deque_new();
    for (uint64_t i = 0; i < PARK__DEQUE_CAP; i++)
        push_item(d, i);
    ASSERT_FALSE(park__deque_push(d, fn_of(PARK__DEQUE_CAP), arg_of(PARK__DEQUE_CAP)));
    ASSERT_EQ(steal_item(d), 0);
    push_item(d, PARK__DEQUE_CAP); /* goes into the slot item 0 left */
    ASSERT_FALSE(park__deque_push(d, fn_of(PARK__DEQUE_CAP + 1), arg_of(PARK__DEQUE_CAP + 1)));
    for (uint64_t i = 1; i <= PARK__DEQUE_CAP; i++)
        ASSERT_EQ(steal_item(d), i);
    assert_empty(d);
    free(d);
}

/* The indices run far past the capacity; the slots are reused in a ring. */
TEST(deque_keeps_order_as_indices_wrap_around_the_slots)
{
    park__deque_t *d = deque_new();
    uint64_t next = 0, oldest = 0;
    for (int lap = 0; lap < 10; lap++) {
        for (int k = 0; k < PARK__DEQUE_CAP / 2 + 3; k++)
            push_item(d, next++);
        while (next - oldest > 5)
            ASSERT_EQ(steal_item(d), oldest++);
    }
    while (next > oldest)
        ASSERT_EQ(pop_item(d), --next);
    assert_empty(d);
    free(d);
}

/* ---- the owner against thieves ------------------------------------------------ */

#define RACE_ITEMS 1000000
#define RACE_MAX_THIEVES 3
#define RACE_MAX_BURST 64

struct race {
    park__deque_t *d;
    uint64_t items;
    _Atomic uint8_t *taken; /* per item */
    atomic_bool owner_done;
    atomic_uint started;
    unsigned thieves;
    uint64_t by_owner;
    uint64_t by_thief[RACE_MAX_THIEVES];
    uint64_t refused; /* pushes refused because the deque was full */
};

struct race_thief {
    struct race *r;
    unsigned id;
};

static void take(struct race *r, uint64_t i)
{
    ASSERT_LT(i, r->items);
    if (atomic_fetch_add_explicit(&r->taken[i], 1, memory_order_relaxed) != 0)
        test_fail(__FILE__, __LINE__, "item %" PRIu64 " taken twice", i);
}

static void start_together(struct race *r)
{
    atomic_fetch_add(&r->started, 1);
    while (atomic_load(&r->started) < r->thieves + 1)
        sched_yield();
}

static void *race_thief_main(void *arg)
{
    struct race_thief *t = arg;
    struct race *r = t->r;
    uint64_t got = 0, newest = 0; /* newest: 1 + the last item stolen */
    start_together(r);
    for (;;) {
        /* Read before stealing: once the owner is done it pushes nothing,
         * and it emptied the deque first, so EMPTY after this is final. */
        bool done = atomic_load(&r->owner_done);
        park__job_t job;
        int rc = park__deque_steal(r->d, &job);
        if (rc == PARK__STEAL_OK) {
            uint64_t i = item_of(job);
            if (i + 1 <= newest)
                test_fail(__FILE__, __LINE__, "thief %u stole item %" PRIu64 " after item %" PRIu64,
                          t->id, i, newest - 1);
            newest = i + 1;
            take(r, i);
            got++;
        } else if (rc == PARK__STEAL_EMPTY) {
            if (done)
                break;
            sched_yield();
        } else {
            ASSERT_EQ(rc, PARK__STEAL_LOST);
        }
    }
    r->by_thief[t->id] = got;
    return NULL;
}

/* Pops up to n items. Every item below *below may be in the deque and none
 * above; `fresh` says that item *below - 1 was just pushed. The first pop
 * must give that newest item (a thief takes it only when it is the last
 * one, and then the pop finds the deque empty), and each pop an older item
 * than the one before. */
static void owner_pops(struct race *r, uint64_t *below, bool fresh, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        park__job_t job;
        if (!park__deque_pop(r->d, &job))
            return; /* empty: thieves took the rest */
        uint64_t i = item_of(job);
        if (k == 0 && fresh && i != *below - 1)
            test_fail(__FILE__, __LINE__, "pop after pushing item %" PRIu64 " gave item %" PRIu64,
                      *below - 1, i);
        if (i >= *below)
            test_fail(__FILE__, __LINE__, "pop gave item %" PRIu64 ", expected one below %" PRIu64,
                      i, *below);
        *below = i;
        take(r, i);
        r->by_owner++;
    }
}

static void race_owner(struct race *r)
{
    uint64_t rng = test_rng_seed(100 + r->thieves);
    uint64_t next = 0, below = 0;
    start_together(r);
    while (next < r->items) {
        /* A burst of pushes, then (mostly) a burst of pops. */
        /* Half the bursts are short, so that the deque often holds one
         * item and the owner and a thief meet on it. */
        uint32_t burst = 1 + test_rng_below(&rng, test_rng_below(&rng, 2) ? RACE_MAX_BURST : 3);
        bool fresh = false;
        for (uint32_t k = 0; k < burst && next < r->items; k++) {
            if (!park__deque_push(r->d, fn_of(next), arg_of(next))) {
                r->refused++;
                break; /* full: pop some below */
            }
            below = ++next;
            fresh = true;
        }
        if (test_rng_below(&rng, 4) != 0)
            owner_pops(r, &below, fresh, 1 + test_rng_below(&rng, burst + 1));
        if (r->refused && test_rng_below(&rng, 64) == 0)
            sched_yield(); /* let thieves make room */
    }
    owner_pops(r, &below, false, UINT32_MAX);
    atomic_store(&r->owner_done, true);
}

enum { FENCED, ASYMMETRIC };

/* Selects a pop/steal pair; false if this build or kernel lacks it. No
 * deque is in use between tests. */
static bool select_pair(int pair)
{
    if (pair == FENCED) {
        park__deque_asymmetric = false;
        return true;
    }
    unsetenv("PARK_DEQUE_FENCE");
    park__deque_setup();
    if (!park__deque_asymmetric)
        printf("     no asymmetric pair here (membarrier or build): skipped\n");
    return park__deque_asymmetric;
}

static void race_run(unsigned thieves, int pair)
{
    if (!select_pair(pair))
        return;
    struct race r;
    memset(&r, 0, sizeof r);
    r.d = deque_new();
    r.items = test_scaled(RACE_ITEMS);
    r.thieves = thieves;
    r.taken = calloc(r.items, sizeof r.taken[0]);
    ASSERT_TRUE(r.taken != NULL);
    struct race_thief t[RACE_MAX_THIEVES];
    for (unsigned i = 0; i < thieves; i++)
        t[i] = (struct race_thief){&r, i};
    test_threads_t *threads = test_threads_start(thieves, race_thief_main, t, sizeof t[0]);
    race_owner(&r);
    test_threads_join(threads);

    uint64_t by_thieves = 0;
    for (unsigned i = 0; i < thieves; i++)
        by_thieves += r.by_thief[i];
    printf("     %" PRIu64 " items: owner %" PRIu64 ", thieves %" PRIu64 "; %" PRIu64
           " pushes refused (full)\n",
           r.items, r.by_owner, by_thieves, r.refused);
    ASSERT_EQ(r.by_owner + by_thieves, r.items);
    for (uint64_t i = 0; i < r.items; i++)
        if (atomic_load_explicit(&r.taken[i], memory_order_relaxed) != 1)
            test_fail(__FILE__, __LINE__, "item %" PRIu64 " taken %u times", i,
                      (unsigned)r.taken[i]);
    assert_empty(r.d);
    free(r.taken);
    free(r.d);
}

TEST(deque_owner_against_1_thief_takes_every_item_once_with_fenced_pops)
{
    race_run(1, FENCED);
}

TEST(deque_owner_against_1_thief_takes_every_item_once_with_membarrier_steals)
{
    race_run(1, ASYMMETRIC);
}

TEST(deque_owner_against_2_thieves_takes_every_item_once_with_fenced_pops)
{
    race_run(2, FENCED);
}

TEST(deque_owner_against_2_thieves_takes_every_item_once_with_membarrier_steals)
{
    race_run(2, ASYMMETRIC);
}

TEST(deque_owner_against_3_thieves_takes_every_item_once_with_fenced_pops)
{
    race_run(3, FENCED);
}

TEST(deque_owner_against_3_thieves_takes_every_item_once_with_membarrier_steals)
{
    race_run(3, ASYMMETRIC);
}

static const test_case_t tests[] = {
    TEST_ENTRY(deque_new_is_empty),
    TEST_ENTRY(deque_pop_on_empty_returns_false_and_leaves_it_usable),
    TEST_ENTRY(deque_steal_on_empty_returns_empty_and_leaves_it_usable),
    TEST_ENTRY(deque_looks_empty_is_false_while_it_holds_an_item),
    TEST_ENTRY(deque_owner_pops_newest_first),
    TEST_ENTRY(deque_thief_steals_oldest_first),
    TEST_ENTRY(deque_pop_and_steal_take_from_opposite_ends),
    TEST_ENTRY(deque_push_on_full_returns_false_and_keeps_every_item),
    TEST_ENTRY(deque_push_succeeds_again_once_an_item_is_taken_from_a_full_deque),
    TEST_ENTRY(deque_keeps_order_as_indices_wrap_around_the_slots),
    TEST_ENTRY(deque_owner_against_1_thief_takes_every_item_once_with_fenced_pops),
    TEST_ENTRY(deque_owner_against_1_thief_takes_every_item_once_with_membarrier_steals),
    TEST_ENTRY(deque_owner_against_2_thieves_takes_every_item_once_with_fenced_pops),
    TEST_ENTRY(deque_owner_against_2_thieves_takes_every_item_once_with_membarrier_steals),
    TEST_ENTRY(deque_owner_against_3_thieves_takes_every_item_once_with_fenced_pops),
    TEST_ENTRY(deque_owner_against_3_thieves_takes_every_item_once_with_membarrier_steals),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
