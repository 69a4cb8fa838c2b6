/* tests/unit/order_test.c: lock-order checking (park/order.h) on the C
 * API. Compiled with PARK_CHECK_ORDER (the inline functions call the
 * checker) and run with PARK_CHECK_ORDER=warn (report and carry on), with
 * exported symbols, so that a report can name the functions here. Every
 * test uses locks of its own: the graph is the process's. */
#include <park/park.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

/* What the checker wrote to standard error while fn ran (malloc'd). */
static char *captured(void (*fn)(void *), void *arg)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    ASSERT_TRUE(saved >= 0 && tmp != NULL);
    ASSERT_TRUE(dup2(fileno(tmp), 2) == 2);
    fn(arg);
    fflush(stderr);
    ASSERT_TRUE(dup2(saved, 2) == 2);
    close(saved);
    long n = ftell(tmp) > 0 ? ftell(tmp) : lseek(fileno(tmp), 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);
    ASSERT_TRUE(text != NULL);
    ASSERT_TRUE(lseek(fileno(tmp), 0, SEEK_SET) == 0);
    ASSERT_EQ(read(fileno(tmp), text, (size_t)n), (ssize_t)n);
    fclose(tmp);
    return text;
}

static void expect_in(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        test_fail(__FILE__, __LINE__, "expected \"%s\" in the report:\n%s", needle, text);
}

static void expect_address(const char *text, const void *lock)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%p", lock);
    expect_in(text, buf);
}

static void *run_thread(void *(*fn)(void *), void *arg)
{
    test_threads_t *t = test_threads_start(1, fn, arg, 0);
    test_threads_join(t);
    return NULL;
}

/* ---- two locks, two orders --------------------------------------------- */

struct pair {
    park_mutex_t a, b;
};

__attribute__((noinline, visibility("default"))) void *order_test_takes_a_then_b(void *arg)
{
    struct pair *p = arg;
    park_mutex_lock(&p->a);
    park_mutex_lock(&p->b);
    park_mutex_unlock(&p->b);
    park_mutex_unlock(&p->a);
    return NULL;
}

__attribute__((noinline, visibility("default"))) void *order_test_takes_b_then_a(void *arg)
{
    struct pair *p = arg;
    park_mutex_lock(&p->b);
    park_mutex_lock(&p->a);
    park_mutex_unlock(&p->a);
    park_mutex_unlock(&p->b);
    return NULL;
}

/* Every test's locks leave the graph at its end: the next test's may
 * reuse the addresses. */
static void destroy_pair(struct pair *p)
{
    ASSERT_EQ(park_mutex_destroy(&p->a), 0);
    ASSERT_EQ(park_mutex_destroy(&p->b), 0);
}

/* One thread, then another: they never overlap, so nothing deadlocks. */
static void both_orders(void *arg)
{
    run_thread(order_test_takes_a_then_b, arg);
    run_thread(order_test_takes_b_then_a, arg);
}

TEST(order_two_mutexes_taken_both_ways_are_reported_once_with_both_sites)
{
    struct pair p = {PARK_MUTEX_INIT, PARK_MUTEX_INIT};
    char *text = captured(both_orders, &p);
    expect_in(text, "lock-order inversion");
    expect_in(text, "a cycle of 2 locks");
    expect_address(text, &p.a);
    expect_address(text, &p.b);
    expect_in(text, "order_test_takes_a_then_b");
    expect_in(text, "order_test_takes_b_then_a");
    free(text);
    /* The same cycle again: not reported twice. */
    text = captured(both_orders, &p);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    destroy_pair(&p);
}

/* ---- a consistent order over many locks -------------------------------- */

#define MANY 100000

static void many_in_order(void *arg)
{
    park_mutex_t *m = arg;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i + 2 < MANY; i++) {
            park_mutex_lock(&m[i]);
            park_mutex_lock(&m[i + 1]);
            if (i % 16 == 0)
                park_mutex_lock(&m[i + 2]); /* and chains of three */
            if (i % 16 == 0)
                park_mutex_unlock(&m[i + 2]);
            park_mutex_unlock(&m[i + 1]);
            park_mutex_unlock(&m[i]);
        }
    }
}

TEST(order_a_consistent_order_over_1e5_mutexes_is_not_reported)
{
    park_mutex_t *m = calloc(MANY, sizeof *m);
    ASSERT_TRUE(m != NULL);
    char *text = captured(many_in_order, m);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    for (size_t i = 0; i < MANY; i++)
        ASSERT_EQ(park_mutex_destroy(&m[i]), 0);
    free(m);
}

/* ---- three locks in a ring ---------------------------------------------- */

struct ring {
    park_mutex_t m[3];
};

static void take_two(park_mutex_t *first, park_mutex_t *second)
{
    park_mutex_lock(first);
    park_mutex_lock(second);
    park_mutex_unlock(second);
    park_mutex_unlock(first);
}

static void ring_first_two(void *arg)
{
    struct ring *r = arg;
    take_two(&r->m[0], &r->m[1]);
    take_two(&r->m[1], &r->m[2]);
}

static void ring_close(void *arg)
{
    struct ring *r = arg;
    take_two(&r->m[2], &r->m[0]);
}

TEST(order_a_three_lock_ring_is_reported_when_it_closes)
{
    struct ring r = {{PARK_MUTEX_INIT, PARK_MUTEX_INIT, PARK_MUTEX_INIT}};
    char *text = captured(ring_first_two, &r);
    ASSERT_EQ(strlen(text), 0); /* 0 then 1, 1 then 2: an order, no cycle */
    free(text);
    text = captured(ring_close, &r);
    expect_in(text, "a cycle of 3 locks");
    for (int i = 0; i < 3; i++)
        expect_address(text, &r.m[i]);
    free(text);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(park_mutex_destroy(&r.m[i]), 0);
}

/* ---- destroyed locks leave the graph ------------------------------------ */

static void a_then_b(void *arg)
{
    struct pair *p = arg;
    take_two(&p->a, &p->b);
}

static void b_then_a(void *arg)
{
    struct pair *p = arg;
    take_two(&p->b, &p->a);
}

TEST(order_a_destroyed_and_reused_address_makes_no_false_cycle)
{
    struct pair p = {PARK_MUTEX_INIT, PARK_MUTEX_INIT};
    char *text = captured(a_then_b, &p);
    free(text);
    /* b's memory now holds another mutex: the old order is not its. */
    ASSERT_EQ(park_mutex_destroy(&p.b), 0);
    park_mutex_init(&p.b);
    text = captured(b_then_a, &p);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    /* ... whereas the new mutex's own orders still count. */
    text = captured(a_then_b, &p);
    expect_in(text, "lock-order inversion");
    free(text);
    destroy_pair(&p);
}

/* ---- try-locks and timed locks ------------------------------------------ */

static void a_then_try_b(void *arg)
{
    struct pair *p = arg;
    park_mutex_lock(&p->a);
    ASSERT_TRUE(park_mutex_try_lock(&p->b));
    park_mutex_unlock(&p->b);
    park_mutex_unlock(&p->a);
}

TEST(order_a_try_lock_records_no_order)
{
    struct pair p = {PARK_MUTEX_INIT, PARK_MUTEX_INIT};
    char *text = captured(a_then_try_b, &p);
    free(text);
    text = captured(b_then_a, &p); /* b then a: the only order recorded */
    ASSERT_EQ(strlen(text), 0);
    free(text);
    /* A lock held by a try-lock still counts as held for later orders. */
    struct pair q = {PARK_MUTEX_INIT, PARK_MUTEX_INIT};
    text = captured(b_then_a, &q);
    free(text);
    text = captured(a_then_try_b, &q); /* no wait, no order */
    ASSERT_EQ(strlen(text), 0);
    free(text);
    destroy_pair(&p);
    destroy_pair(&q);
}

static void a_then_timed_b(void *arg)
{
    struct pair *p = arg;
    park_mutex_lock(&p->a);
    ASSERT_EQ(park_mutex_lock_until(&p->b, park_deadline_in(1000000)), 0);
    park_mutex_unlock(&p->b);
    park_mutex_unlock(&p->a);
}

TEST(order_a_timed_acquisition_is_reported_as_timed)
{
    struct pair p = {PARK_MUTEX_INIT, PARK_MUTEX_INIT};
    char *text = captured(b_then_a, &p);
    free(text);
    text = captured(a_then_timed_b, &p);
    expect_in(text, "lock-order inversion");
    expect_in(text, "timed");
    free(text);
    destroy_pair(&p);
}

/* ---- rwlocks ------------------------------------------------------------ */

struct rw_pair {
    park_rwlock_t rw;
    park_mutex_t m;
};

static void read_then_mutex(void *arg)
{
    struct rw_pair *p = arg;
    park_rwlock_read_lock(&p->rw);
    park_mutex_lock(&p->m);
    park_mutex_unlock(&p->m);
    park_rwlock_read_unlock(&p->rw);
}

static void mutex_then_write(void *arg)
{
    struct rw_pair *p = arg;
    park_mutex_lock(&p->m);
    park_rwlock_write_lock(&p->rw);
    park_rwlock_write_unlock(&p->rw);
    park_mutex_unlock(&p->m);
}

TEST(order_an_rwlock_read_hold_and_a_mutex_taken_both_ways_are_reported)
{
    struct rw_pair p = {PARK_RWLOCK_INIT, PARK_MUTEX_INIT};
    char *text = captured(read_then_mutex, &p);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    text = captured(mutex_then_write, &p);
    expect_in(text, "lock-order inversion");
    expect_address(text, &p.rw);
    expect_address(text, &p.m);
    free(text);
    ASSERT_EQ(park_rwlock_destroy(&p.rw), 0);
    ASSERT_EQ(park_mutex_destroy(&p.m), 0);
}

/* ---- classes ------------------------------------------------------------ */

#define ITEMS 10000

struct table {
    park_mutex_t lock;
    park_mutex_t *items; /* ITEMS of them */
};

static const char item_class; /* the class's key: any address of ours */

static void lock_then_item(void *arg) /* the table, then item 1 */
{
    struct table *t = arg;
    take_two(&t->lock, &t->items[1]);
}

static void item_then_lock(void *arg) /* the last item, then the table */
{
    struct table *t = arg;
    take_two(&t->items[ITEMS - 1], &t->lock);
}

static void items_both_ways(void *arg) /* two items, in both orders */
{
    struct table *t = arg;
    take_two(&t->items[2], &t->items[3]);
    take_two(&t->items[3], &t->items[2]);
}

static void destroy_table(struct table *t)
{
    for (size_t i = 0; i < ITEMS; i++)
        ASSERT_EQ(park_mutex_destroy(&t->items[i]), 0);
    ASSERT_EQ(park_mutex_destroy(&t->lock), 0);
    free(t->items);
}

TEST(order_locks_of_one_class_are_one_node)
{
    struct table t = {PARK_MUTEX_INIT, calloc(ITEMS, sizeof(park_mutex_t))};
    ASSERT_TRUE(t.items != NULL);
    /* Unclassed, the two orders are on different locks: no cycle. */
    char *text = captured(lock_then_item, &t);
    free(text);
    text = captured(item_then_lock, &t);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    /* One class: the table then an item here, another item then the table
     * there, is an inversion, named by the class. */
    for (size_t i = 0; i < ITEMS; i++)
        park_order_class(&t.items[i], &item_class, "table item");
    text = captured(lock_then_item, &t);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    text = captured(item_then_lock, &t);
    expect_in(text, "lock-order inversion");
    expect_in(text, "a cycle of 2 locks");
    expect_in(text, "of class table item");
    expect_address(text, &t.items[1]);
    expect_address(text, &t.items[ITEMS - 1]);
    expect_address(text, &t.lock);
    free(text);
    /* Two items of the class, in both orders: within a class, nothing. */
    text = captured(items_both_ways, &t);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    destroy_table(&t);
}

TEST(order_a_lock_taken_out_of_its_class_is_its_own_node_again)
{
    struct table t = {PARK_MUTEX_INIT, calloc(ITEMS, sizeof(park_mutex_t))};
    ASSERT_TRUE(t.items != NULL);
    static const char key;
    for (size_t i = 0; i < ITEMS; i++)
        park_order_class(&t.items[i], &key, "other item");
    char *text = captured(lock_then_item, &t);
    free(text);
    /* The last item leaves the class (by a NULL key; item 2 by its
     * destroy and init): their orders are their own. */
    park_order_class(&t.items[ITEMS - 1], NULL, NULL);
    text = captured(item_then_lock, &t);
    ASSERT_EQ(strlen(text), 0);
    free(text);
    ASSERT_EQ(park_mutex_destroy(&t.items[2]), 0);
    park_mutex_init(&t.items[2]);
    text = captured(items_both_ways, &t); /* items 2 and 3: two nodes now */
    expect_in(text, "lock-order inversion");
    free(text);
    destroy_table(&t);
}

static const test_case_t tests[] = {
    TEST_ENTRY(order_two_mutexes_taken_both_ways_are_reported_once_with_both_sites),
    TEST_ENTRY(order_a_consistent_order_over_1e5_mutexes_is_not_reported),
    TEST_ENTRY(order_a_three_lock_ring_is_reported_when_it_closes),
    TEST_ENTRY(order_a_destroyed_and_reused_address_makes_no_false_cycle),
    TEST_ENTRY(order_a_try_lock_records_no_order),
    TEST_ENTRY(order_a_timed_acquisition_is_reported_as_timed),
    TEST_ENTRY(order_an_rwlock_read_hold_and_a_mutex_taken_both_ways_are_reported),
    TEST_ENTRY(order_locks_of_one_class_are_one_node),
    TEST_ENTRY(order_a_lock_taken_out_of_its_class_is_its_own_node_again),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
